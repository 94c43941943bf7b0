"""Which catalog runs each tier of the self-tests makes: the rule, written down once.

**Tier 1** (``pytest selftests -n 2 --dist loadgroup``, what ``.ci/run`` runs on every change) runs a
fixed slice of the catalogs, so that every change gets its verdict within CI's ten minutes:

- the kill matrix: for every area of the document that some fault breaks (a clause's first part:
  ``auth``, ``list``, ``create``, ``read``, ...), the first fault of ``faults.toml`` declared on one of
  its clauses (empty store), and the first fault only the generated tests can catch; the reference on
  an empty and on a crowded store, and every ``VARIANT_STRIDE``-th other compliant variant in catalog
  order; every unjudgeable target;
- each blind round: its first compliant server, on one store (the empty store in the first round, the
  crowded one in the next, and so on): the specificity across styles, frameworks and languages that
  the kill matrix's slice shows least.  The rounds' faults are tier 2's.

Every fault's server is still probed in tier 1 for what it declares (``test_fault_table.py``), and every
check is still shown to decide its clause (``test_unexamined.py``); what only tier 2 shows is each
fault caught by the suite on its own clause, every compliant server passed on both stores.

**Tier 2** (``python -m devtools.selfproof``, the same self-tests with ``--self-proof``) runs every
scenario of every catalog, the whole mutation sample, the repetition tests at their full counts and the
tests marked ``tier_2`` (another setting or target of a mechanism a tier-1 test shows).

The slice is data derived from the catalogs, never a hand-kept list: a fault added on a new area
joins tier 1 by the rule, and ``selftests/test_tiers.py`` fails if the slice ever stops covering every
area, every catalog's compliant servers or the unjudgeable targets.
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

# Every 30th other compliant variant of the kill matrix: one of its 30 (the catalog's order groups
# variants by the silence they choose for; tier 2 runs them all).
VARIANT_STRIDE = 30


def _every(items: Sequence[T], stride: int) -> list[T]:
    return list(items[stride - 1 :: stride])


def generated_only(scenario: Scenario) -> bool:
    return scenario.kind == "fault" and scenario.store == EMPTY and FAULTS[scenario.name].generated_only


def area(clause: str) -> str:
    """The area of the document a clause belongs to: its id's first part (``list.limit.maximum``: ``list``),
    not its numbered section (``Clause.section``), which several areas share."""
    return clause.split(".", 1)[0]


def kill_matrix_slice(everything: Iterable[Scenario]) -> list[Scenario]:
    """Tier 1's scenarios of the kill matrix, in catalog order (see the module's docstring)."""
    everything = list(everything)
    first_in_area: dict[str, str] = {}
    for name, fault in FAULTS.items():
        first_in_area.setdefault(area(fault.clause), name)
    generated_only = next((name for name, fault in FAULTS.items() if fault.generated_only), None)
    faults = {*first_in_area.values(), *([generated_only] if generated_only else [])}
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
    for number, round_ in enumerate(ROUNDS):
        mine = [s for s in everything if s.round == round_]
        compliant = [s for s in mine if s.kind == "compliant"]
        if compliant:
            first = [s for s in compliant if s.name == compliant[0].name]  # the first server, on each store
            crowded = number % 2 == 1
            chosen |= {next((s for s in first if (s.preload > 0) == crowded), first[0])}
    return [s for s in everything if s in chosen]


@cache
def kill_matrix(whole: bool) -> list[Scenario]:
    """The kill matrix's scenarios of a tier: every one (tier 2) or the slice (tier 1)."""
    return scenarios() if whole else kill_matrix_slice(scenarios())


@cache
def blind(whole: bool) -> list[BlindScenario]:
    """The blind rounds' servers of a tier: every one (tier 2) or the slice (tier 1)."""
    return blind_scenarios() if whole else blind_slice(blind_scenarios())
