"""Tier 1's slice of the catalogs (``tiers.py``) keeps covering what the whole catalogs cover.

The slice is derived from the catalogs by a rule, so it grows with them; these tests make sure it can
never silently lose an area of the document, a catalog's compliant servers, or the tier-1 test named for
an area's fault or an unjudgeable target, and that it stays a slice (tier 1 has to fit in CI's ten minutes).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import test_empty_store
import test_one_fault
import tiers
from blind_scores import ROUNDS, BlindScenario
from blind_scores import scenarios as blind_scenarios
from devtools.catalog import FAULTS, VARIANTS
from devtools.killmatrix import CROWDED, EMPTY, Scenario, scenarios

HERE = Path(__file__).resolve().parent
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


def test_every_area_a_fault_breaks_has_a_fault_in_the_slice_or_in_a_tier_1_test_of_its_own(
    kill_slice: list[Scenario],
) -> None:
    in_slice = {tiers.area(FAULTS[s.name].clause) for s in kill_slice if s.kind == "fault"}
    shown = {tiers.area(FAULTS[name].clause) for name in tiers.FAULTS_SHOWN_BY}
    assert sorted({tiers.area(f.clause) for f in FAULTS.values()} - in_slice - shown) == []
    assert {"auth", "list", "create", "read"} <= in_slice | shown
    # An area shown by its own test is not run again in the slice (but for the generated-only fault).
    faults = [s for s in kill_slice if s.kind == "fault" and not tiers.generated_only(s)]
    again = {s.name for s in faults if tiers.area(FAULTS[s.name].clause) in shown}
    assert again == set(), again


def _runs(node_id: str, fault: str) -> str:
    """Why the tier-1 test ``node_id`` does not run ``fault`` as the kill matrix does ("" when it does)."""
    if why := _shown(node_id):
        return why
    if node_id == tiers.ONE_FAULT:
        tier_1 = {name for principle in test_one_fault.PRINCIPLES for name in principle.shown_by}
        return "" if fault in tier_1 else f"{node_id}: {fault} is not one of its tier-1 faults"
    path = node_id.partition("::")[0]
    source = (HERE / path).read_text(encoding="utf-8")
    return "" if f'Scenario("fault", "{fault}")' in source else f"{node_id}: runs no Scenario of {fault}"


def test_every_fault_shown_by_its_own_test_is_run_there_in_tier_1() -> None:
    assert set(tiers.FAULTS_SHOWN_BY) <= set(FAULTS)
    assert [why for fault, node in tiers.FAULTS_SHOWN_BY.items() if (why := _runs(node, fault))] == []
    assert _runs(tiers.ONE_FAULT, "auth_403").endswith("not one of its tier-1 faults")  # a tier-2 one
    assert _runs("test_one_fault.py::test_every_exception_names_a_fault_and_is_documented", "orders_404")


def test_the_area_rule_keeps_a_fault_of_every_area_without_a_test_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tiers, "FAULTS_SHOWN_BY", {})
    chosen = tiers.kill_matrix_slice(scenarios())
    covered = {tiers.area(FAULTS[s.name].clause) for s in chosen if s.kind == "fault"}
    assert covered == {tiers.area(f.clause) for f in FAULTS.values()}


def test_the_slice_holds_a_fault_only_the_generated_tests_catch(kill_slice: list[Scenario]) -> None:
    assert any(tiers.generated_only(s) for s in kill_slice)


def _shown(node_id: str) -> str:
    """Why the tier-1 self-test ``file.py::function[param]`` does not show what it is named for ("" when it can)."""
    path, _, test = node_id.partition("::")
    function, _, param = test.partition("[")
    source = (HERE / path).read_text(encoding="utf-8") if (HERE / path).is_file() else ""
    if f"def {function}(" not in source:
        return f"{node_id}: no such test"
    if param and f'"{param.rstrip("]")}"' not in source:
        return f"{node_id}: no such parameter"
    if re.search(rf"@pytest\.mark\.tier_2\s*\n(@.*\n)*def {function}\(", source):
        return f"{node_id}: a tier-2 test"
    return ""


def test_the_kill_matrix_slice_has_the_reference_on_a_crowded_store_and_variants_on_an_empty_one_in_tier_1(
    kill_slice: list[Scenario],
) -> None:
    variants = [s for s in kill_slice if s.kind == "variant"]
    assert {(s.name, s.store) for s in variants} == {("reference", CROWDED)}
    assert _shown(tiers.COMPLIANT_SHOWN_BY) == ""
    others = [name for name in test_empty_store.TIER_1 if name != "reference"]
    assert others and {Scenario("variant", name, EMPTY) for name in others} <= set(scenarios()), others
    assert all(not VARIANTS[name].preload for name in others), "the compliant variants' tier-1 runs: an empty store"


def test_every_unjudgeable_target_is_in_the_slice_or_shown_by_tier_1_tests_of_its_own(
    kill_slice: list[Scenario],
) -> None:
    unjudgeable = {s for s in scenarios() if s.kind == "unjudgeable"}
    assert set(tiers.UNJUDGEABLE_SHOWN_BY) <= {s.name for s in unjudgeable}, "a named target is in the catalog"
    for scenario in unjudgeable:
        shown_by = tiers.UNJUDGEABLE_SHOWN_BY.get(scenario.name, ())
        assert (scenario in kill_slice) != bool(shown_by), scenario.name
        assert [_shown(node_id) for node_id in shown_by if _shown(node_id)] == [], scenario.name


def test_the_unjudgeable_rule_keeps_a_target_without_tier_1_tests(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tiers, "UNJUDGEABLE_SHOWN_BY", {})
    unjudgeable = [s for s in scenarios() if s.kind == "unjudgeable"]
    assert unjudgeable and set(unjudgeable) <= set(tiers.kill_matrix_slice(scenarios()))
    # The check of a named test fails on a test that is not there, a row that is not there, a tier-2 test.
    assert _shown("test_hostile.py::test_no_such_test").endswith("no such test")
    row = "test_unusable.py::test_an_unusable_target_stops_the_run_with_one_reason[no-such-row]"
    assert _shown(row).endswith("no such parameter")
    tier_2 = "test_empty_store.py::test_every_compliant_variant_on_an_empty_store_decides_every_clause"
    assert _shown(tier_2).endswith("a tier-2 test")


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
