"""Each fault's implementation, registered under its name, and the server that serves one.

A fault is a subclass of the clean ``PetStore`` or ``Rules`` that overrides the hooks it needs,
decorated with ``@fault("<name>")``.  ``store_factory`` is what the reference's ``build_app`` builds
for one named fault (its seam: the package never imports the catalog), and ``catalog_app`` the
served app, the clean reference when no fault is named.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from starlette.applications import Starlette

from devtools.catalog.choices import RULED, STORED
from devtools.catalog.faults import FAULTS
from devtools.catalog.fronts import FRONTED, FrontLayer
from petstore_contract.reference.app import PetStore
from petstore_contract.reference.asgi import build_app
from petstore_contract.reference.rules import Rules
from petstore_contract.reference.variants import REFERENCE, Variant

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


def store_factory(name: str) -> Callable[[str, Variant], PetStore]:
    """Builds the reference server with the fault ``name`` of ``faults.toml`` (key, variant -> store)."""
    if name not in FAULTS:
        raise ValueError(f"unknown fault {name!r}")
    found = [i for i in REGISTERED if i.name == name]
    if len(found) != 1:
        raise ValueError(f"fault {name!r} has {len(found)} implementations, not one")
    implementation = found[0]

    def build(api_key: str, variant: Variant) -> PetStore:
        return implementation.store(api_key, variant, implementation.rules)

    return build


def catalog_app(api_key: str, variant: Variant = REFERENCE, fault: str | None = None) -> Starlette:
    """The reference's app (``build_app``) with the fault ``fault`` installed; without one, the clean
    reference (with the rules or the store of its own of a variant that has some, ``choices.RULED``,
    ``choices.STORED``).  A compliant
    variant with a front (``fronts.FRONTED``), or a fault whose store names one (``front``), is served
    behind it, as a framework or a proxy would stand before the service."""
    if fault is not None:
        app = build_app(api_key, variant, store_factory=store_factory(fault))
    elif variant.name in RULED or variant.name in STORED:
        rules, served = RULED.get(variant.name, Rules), STORED.get(variant.name, PetStore)
        app = build_app(api_key, variant, store_factory=lambda key, chosen: served(key, chosen, rules))
    else:
        app = build_app(api_key, variant)
    front = FRONTED.get(variant.name) if fault is None else getattr(app.state.store, "front", None)
    if front is not None:
        app.add_middleware(FrontLayer, front=front, api_key=api_key)
    layer = getattr(app.state.store, "layer", None) if fault is not None else None
    if layer is not None:  # a web server's own answers in front of the service (``faulty/http_layer.py``)
        app.add_middleware(layer, api_key=api_key)
    return app
