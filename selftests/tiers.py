"""Which catalog runs each tier of the self-tests makes: the rule, written down once.

**Tier 1** (``pytest selftests -n 2 --dist loadgroup``, what ``.ci/run`` runs on every change) runs a
fixed slice of the catalogs, so that every change gets its verdict in minutes:

- the kill matrix: for every clause that some fault breaks, the first fault of ``faults.toml``
  declared on it (empty store), and the first fault only the generated tests can catch; the
  reference on an empty and on a crowded store, and every ``VARIANT_STRIDE``-th other compliant
  variant in catalog order; every unjudgeable target;
- each blind round: its first compliant server on an empty and on a crowded store, then
  ``BLIND_COMPLIANT`` other compliant entries and ``BLIND_FAULTS`` faults spread evenly over the round,
  in catalog order.

**Tier 2** (``python -m devtools.selfproof``, the same self-tests with ``--self-proof``) runs every
scenario of every catalog, the whole mutation sample and the repetition tests at their full counts.

The slice is data derived from the catalogs, never a hand-kept list: a fault added on a new clause
joins tier 1 by the rule, and ``selftests/test_tiers.py`` fails if the slice ever stops covering every
clause, every catalog's compliant servers or the unjudgeable targets.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cache
from typing import TypeVar

from blind_scores import ROUNDS, BlindScenario
from blind_scores import scenarios as blind_scenarios
from devtools.catalog import FAULTS
from devtools.killmatrix import CROWDED, EMPTY, Scenario, scenarios

T = TypeVar("T")
GENERATED_ONLY = "generated-only"  # the faults on the empty store that only the generated tests can catch

# Every 10th other compliant variant of the kill matrix: three of its 30, spread over the catalog's order,
# which groups variants by the silence they choose for.
VARIANT_STRIDE = 10
# Of a blind round's other compliant entries (each server on two stores) and of its faults, this many
# each, spread over the round: enough to catch a round that stopped working, few enough for tier 1.
BLIND_COMPLIANT, BLIND_FAULTS = 1, 2


def _every(items: Sequence[T], stride: int) -> list[T]:
    return list(items[stride - 1 :: stride])


def _spread(items: Sequence[T], count: int) -> list[T]:
    """``count`` of ``items`` (all of them when there are no more), spread evenly, the last one included."""
    if len(items) <= count:
        return list(items)
    return [items[(n + 1) * len(items) // count - 1] for n in range(count)]


def generated_only(scenario: Scenario) -> bool:
    return scenario.kind == "fault" and scenario.store == EMPTY and FAULTS[scenario.name].generated_only


def kill_matrix_slice(everything: Iterable[Scenario]) -> list[Scenario]:
    """Tier 1's scenarios of the kill matrix, in catalog order (see the module's docstring)."""
    everything = list(everything)
    first_on_clause: dict[str, str] = {}
    for name, fault in FAULTS.items():
        first_on_clause.setdefault(fault.clause, name)
    generated_only = next((name for name, fault in FAULTS.items() if fault.generated_only), None)
    faults = {*first_on_clause.values(), *([generated_only] if generated_only else [])}
    variants = [s.name for s in everything if s.kind == "variant" and s.store == EMPTY and s.name != "reference"]
    chosen = {
        *(Scenario("fault", name, EMPTY) for name in faults),
        Scenario("variant", "reference", EMPTY),
        Scenario("variant", "reference", CROWDED),
        *(Scenario("variant", name, EMPTY) for name in _every(variants, VARIANT_STRIDE)),
        *(s for s in everything if s.kind == "unjudgeable"),
    }
    return [s for s in everything if s in chosen]


def blind_slice(everything: Iterable[BlindScenario]) -> list[BlindScenario]:
    """Tier 1's servers of the blind rounds, in catalog order (see the module's docstring)."""
    everything = list(everything)
    chosen: set[BlindScenario] = set()
    for round_ in ROUNDS:
        mine = [s for s in everything if s.round == round_]
        compliant = [s for s in mine if s.kind == "compliant"]
        if compliant:
            first = compliant[0].name
            chosen |= {s for s in compliant if s.name == first}  # on every store it runs on
            chosen |= set(_spread([s for s in compliant if s.name != first], BLIND_COMPLIANT))
        chosen |= set(_spread([s for s in mine if s.kind == "fault"], BLIND_FAULTS))
    return [s for s in everything if s in chosen]


@cache
def kill_matrix(whole: bool) -> list[Scenario]:
    """The kill matrix's scenarios of a tier: every one (tier 2) or the slice (tier 1)."""
    return scenarios() if whole else kill_matrix_slice(scenarios())


@cache
def blind(whole: bool) -> list[BlindScenario]:
    """The blind rounds' servers of a tier: every one (tier 2) or the slice (tier 1)."""
    return blind_scenarios() if whole else blind_slice(blind_scenarios())
