"""Which catalog runs each tier of the self-tests makes: the rule, written down once.

**Tier 1** (``pytest selftests -n 2 --dist loadgroup``, what ``.ci/run`` runs on every change) runs a
fixed slice of the catalogs, so that every change gets its verdict within CI's ten minutes:

- the kill matrix: for every area of the document that some fault breaks (a clause's first part:
  ``auth``, ``list``, ``create``, ``read``, ...) and no fault of ``FAULTS_SHOWN_BY`` shows, the first
  fault of ``faults.toml`` declared on one of its clauses (empty store), and the first fault only the
  generated tests can catch; the reference on a crowded store; each unjudgeable target for which
  ``UNJUDGEABLE_SHOWN_BY`` names no tier-1 test of its own (none today: ``test_unusable.py`` and
  ``test_hostile.py`` show each one's inconclusive end).  The compliant variants on an empty store,
  the reference's among them, are ``COMPLIANT_SHOWN_BY``'s (two of them, held to conformant with every
  clause decided);
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
area or every catalog's compliant servers, or an unjudgeable target is neither in it nor named with
tier-1 tests that exist.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

from blind_scores import ROUNDS, BlindScenario
from blind_scores import scenarios as blind_scenarios
from devtools.catalog import FAULTS
from devtools.killmatrix import CROWDED, EMPTY, Scenario, scenarios

GENERATED_ONLY = "generated-only"  # the faults on the empty store that only the generated tests can catch

# Each unjudgeable target of the kill matrix, and the tier-1 tests that show its mechanism ending a run
# inconclusive with its reason: the same target (a refused port, a key refused on every operation) or
# the same kind (a peer that never answers; a run budget spent by a slow target).  The kill matrix runs
# them in tier 2; a target added without an entry here joins tier 1's slice by the rule.
UNJUDGEABLE_SHOWN_BY: dict[str, tuple[str, ...]] = {
    "closed-port": ("test_unusable.py::test_an_unusable_target_stops_the_run_with_one_reason[closed-port]",),
    "blackhole": ("test_hostile.py::test_server_that_never_answers",),
    "rejects-every-key": (
        "test_unusable.py::test_an_unusable_target_stops_the_run_with_one_reason[wrong-key]",
        "test_unusable.py::test_an_unusable_target_stops_the_run_with_one_reason[rejects-every-key-read-only]",
    ),
    "over-budget": ("test_hostile.py::test_run_budget_spent_on_a_good_target_is_never_a_pass",),
}
# The tier-1 test that runs compliant variants of the catalog other than the reference (``TIER_1`` of
# its module) on an empty store and holds each to conformant with every clause decided: the kill
# matrix's variant test, the reference's on an empty store included, would show the same more weakly
# (tier 2 runs every compliant variant in both).
COMPLIANT_SHOWN_BY = "test_empty_store.py::test_a_variant_that_left_a_clause_undecided_is_decided"
# Faults that a tier-1 test of its own runs as the kill matrix does (one suite run, quick profile, empty
# store) and holds to what the kill matrix demands (``killmatrix.acceptable``: caught on its clause, no
# collateral, no suite error) and more (every other clause decided): the area of each is shown in tier 1
# there, and the kill matrix's run of that area's first fault would prove it again.  ``test_tiers.py``
# checks each is one of that test's tier-1 faults.
ONE_FAULT = "test_one_fault.py::test_a_fault_leaves_every_other_clause_decided"
FAULTS_SHOWN_BY: dict[str, str] = {
    "create_returns_200": "test_one_fault.py::test_a_create_answered_200_with_its_pet_violates_create_created_alone",
    "auth_missing_403": ONE_FAULT,
    "list_item_missing_category": ONE_FAULT,
    "error_missing_code": ONE_FAULT,
    "create_500_on_category_minus_one": ONE_FAULT,
}


def generated_only(scenario: Scenario) -> bool:
    return scenario.kind == "fault" and scenario.store == EMPTY and FAULTS[scenario.name].generated_only


def area(clause: str) -> str:
    """The area of the document a clause belongs to: its id's first part (``list.limit.maximum``: ``list``),
    not its numbered section (``Clause.section``), which several areas share."""
    return clause.split(".", 1)[0]


def kill_matrix_slice(everything: Iterable[Scenario]) -> list[Scenario]:
    """Tier 1's scenarios of the kill matrix, in catalog order (see the module's docstring)."""
    everything = list(everything)
    shown = {area(FAULTS[name].clause) for name in FAULTS_SHOWN_BY}
    first_in_area: dict[str, str] = {}
    for name, fault in FAULTS.items():
        if area(fault.clause) not in shown:
            first_in_area.setdefault(area(fault.clause), name)
    generated_only = next((name for name, fault in FAULTS.items() if fault.generated_only), None)
    faults = {*first_in_area.values(), *([generated_only] if generated_only else [])}
    chosen = {
        *(Scenario("fault", name, EMPTY) for name in faults),
        Scenario("variant", "reference", CROWDED),
        *(s for s in everything if s.kind == "unjudgeable" and s.name not in UNJUDGEABLE_SHOWN_BY),
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
