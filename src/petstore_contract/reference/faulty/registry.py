"""Each fault's implementation, registered under its name, and the store that serves one.

A fault is a subclass of the clean ``PetStore`` or ``Rules`` that overrides the hooks it needs,
decorated with ``@fault("<name>")``; ``faulty_store`` builds the server of one named fault.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from petstore_contract.reference.app import PetStore
from petstore_contract.reference.faults import FAULTS
from petstore_contract.reference.rules import Rules
from petstore_contract.reference.variants import Variant

C = TypeVar("C", bound=type)


@dataclass(frozen=True)
class Implementation:
    name: str  # the fault's name in faults.toml
    store: type[PetStore]
    rules: type[Rules]


# Every registration, in import order: a fault registered twice shows here twice (selftests/test_faults.py).
REGISTERED: list[Implementation] = []


def fault(name: str, rules: type[Rules] = Rules) -> Callable[[C], C]:
    """Registers the decorated class as the fault ``name``: a ``Rules`` subclass (served by the clean
    ``PetStore``), or a ``PetStore`` subclass served with ``rules``."""

    def register(cls: C) -> C:
        if issubclass(cls, Rules):
            REGISTERED.append(Implementation(name, PetStore, cls))
        elif issubclass(cls, PetStore):
            REGISTERED.append(Implementation(name, cls, rules))
        else:
            raise TypeError(f"fault {name}: {cls.__name__} is neither a PetStore nor a Rules")
        return cls

    return register


def faulty_store(api_key: str, variant: Variant, name: str) -> PetStore:
    """The reference server with the fault ``name`` of ``faults.toml``."""
    if name not in FAULTS:
        raise ValueError(f"unknown fault {name!r}")
    found = [i for i in REGISTERED if i.name == name]
    if len(found) != 1:
        raise ValueError(f"fault {name!r} has {len(found)} implementations, not one")
    return found[0].store(api_key, variant, found[0].rules)
