"""Tier 1's slice of the catalogs (``tiers.py``) keeps covering what the whole catalogs cover.

The slice is derived from the catalogs by a rule, so it grows with them; these tests make sure it can
never silently lose a area of the document, a catalog's compliant servers or the unjudgeable
targets, and that it stays a slice (tier 1 has to fit in CI's ten minutes).
"""

from __future__ import annotations

import pytest

import tiers
from blind_scores import ROUNDS, BlindScenario
from blind_scores import scenarios as blind_scenarios
from devtools.catalog import FAULTS
from devtools.killmatrix import CROWDED, EMPTY, Scenario, scenarios

# Tier 1's budget for catalog runs (each about 6 s of CPU, a tenth of the self-tests' CPU for every
# ten runs): beyond it, .ci/run leaves its 10 minutes.
MOST_RUNS = 30


@pytest.fixture(scope="module")
def kill_slice() -> list[Scenario]:
    return tiers.kill_matrix_slice(scenarios())


@pytest.fixture(scope="module")
def blind() -> tuple[list[BlindScenario], list[BlindScenario]]:
    everything = blind_scenarios()
    return everything, tiers.blind_slice(everything)


def test_every_area_a_fault_breaks_has_a_fault_in_the_slice(kill_slice: list[Scenario]) -> None:
    covered = {tiers.area(FAULTS[s.name].clause) for s in kill_slice if s.kind == "fault"}
    assert sorted({tiers.area(f.clause) for f in FAULTS.values()} - covered) == []
    assert {"auth", "list", "create", "read"} <= covered


def test_the_slice_holds_a_fault_only_the_generated_tests_catch(kill_slice: list[Scenario]) -> None:
    assert any(tiers.generated_only(s) for s in kill_slice)


def test_the_kill_matrix_slice_has_compliant_servers_on_both_stores_and_every_unjudgeable_target(
    kill_slice: list[Scenario],
) -> None:
    variants = [s for s in kill_slice if s.kind == "variant"]
    assert {s.store for s in variants} == {EMPTY, CROWDED}
    assert len({s.name for s in variants}) >= 2, "the reference and its compliant variants"
    unjudgeable = {s for s in scenarios() if s.kind == "unjudgeable"}
    assert unjudgeable <= set(kill_slice)


def test_every_blind_round_has_a_compliant_server_in_the_slice(
    blind: tuple[list[BlindScenario], list[BlindScenario]],
) -> None:
    _, chosen = blind
    for round_ in ROUNDS:
        assert any(s.kind == "compliant" and s.round == round_ for s in chosen), f"{round_}: a compliant server"
    compliant_stores = {s.preload > 0 for s in chosen if s.kind == "compliant"}
    assert compliant_stores == {False, True}, "the rounds' compliant servers on an empty and on a crowded store"


def test_the_slice_is_taken_from_the_catalogs_and_stays_a_slice(
    kill_slice: list[Scenario], blind: tuple[list[BlindScenario], list[BlindScenario]]
) -> None:
    everything, chosen = blind
    assert set(kill_slice) <= set(scenarios()) and set(chosen) <= set(everything)
    assert len(kill_slice) == len(set(kill_slice)) and len(chosen) == len(set(chosen))
    runs = len(kill_slice) + len(chosen)
    assert runs <= MOST_RUNS, f"tier 1 runs {runs} catalog scenarios, more than its budget of {MOST_RUNS}"
    assert runs < (len(scenarios()) + len(everything)) / 3, "tier 1 is a slice, tier 2 the whole"


def test_tier_2_takes_every_scenario() -> None:
    assert tiers.kill_matrix(whole=True) == scenarios() and tiers.blind(whole=True) == blind_scenarios()
    assert tiers.kill_matrix(whole=False) == tiers.kill_matrix_slice(scenarios())
    assert tiers.blind(whole=False) == tiers.blind_slice(blind_scenarios())
