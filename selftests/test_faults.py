"""The suite proves itself: every fault is caught on its own clause with no collateral, on an
empty store and on one crowded in every status (400 animals, oldest first, another client
writing); every compliant variant passes; every target
it cannot judge ends inconclusive.  Each server is checked as a user would check it: pytest in a
subprocess with --base-url and the key in the environment.  The kill matrix prints at the end.
"""

from __future__ import annotations

from collections import Counter

import pytest

from devtools.catalog import FAULTS, REGISTERED, VARIANTS
from devtools.killmatrix import Scenario, acceptable, caught, collateral
from devtools.launcher import SuiteRun
from petstore_contract.interface.clauses import registry

Catalog = dict[Scenario, SuiteRun]
CATCH_ALL = "generated.other"


# Each test below runs on this tier's scenarios of its kind (selftests/tiers.py; conftest.py parametrizes).


@pytest.mark.catalog_kind("kill-matrix", "fault")
def test_fault_is_caught_on_its_clause_alone(catalog: Catalog, catalog_scenario: Scenario) -> None:
    scenario = catalog_scenario
    run = catalog[scenario]
    fault = FAULTS[scenario.name]
    assert acceptable(scenario, run), (
        f"{scenario.label} breaks {fault.clause}: verdict {run.verdict} (exit {run.exit_code}), violated "
        f"{sorted(run.violated())}, collateral {sorted(collateral(scenario, run))}, undecided "
        f"{sorted(run.clauses('undecided'))}\n{run.output[-2500:]}"
    )


@pytest.mark.catalog_kind("kill-matrix", "variant")
def test_compliant_server_passes(catalog: Catalog, catalog_scenario: Scenario) -> None:
    scenario = catalog_scenario
    run = catalog[scenario]
    assert acceptable(scenario, run), (
        f"false alarm on compliant variant {scenario.name}: verdict {run.verdict}, violated {sorted(run.violated())}, "
        f"findings {[f['expected'] + ' / ' + f['observed'] for f in run.findings()][:3]}\n{run.output[-2500:]}"
    )


@pytest.mark.catalog_kind("kill-matrix", "unjudgeable")
def test_unjudgeable_target_is_inconclusive(catalog: Catalog, catalog_scenario: Scenario) -> None:
    scenario = catalog_scenario
    run = catalog[scenario]
    assert acceptable(scenario, run), (
        f"{scenario.name}: verdict {run.verdict}, exit {run.exit_code}\n{run.output[-2500:]}"
    )
    assert run.summary["reason"], "an inconclusive verdict names its reason"
    if scenario.name == "over-budget":
        assert "run budget" in run.summary["reason"], run.summary["reason"]


@pytest.mark.catalog_kind("kill-matrix", "generated-only")
def test_generated_tests_catch_what_targeted_tests_miss(catalog: Catalog, catalog_scenario: Scenario) -> None:
    fault = catalog_scenario.name
    run = catalog[catalog_scenario]
    sources = {f["source"] for f in run.findings() if f["clause"] == FAULTS[fault].clause}
    assert caught(Scenario("fault", fault), run) and sources == {"generated"}, f"{fault}: findings from {sources}"


def test_every_fault_names_a_known_clause() -> None:
    clauses = registry()
    unknown = {f.name: f.clause for f in FAULTS.values() if f.clause not in clauses}
    assert not unknown, unknown
    assert all(d in clauses for f in FAULTS.values() for d in f.dependants)


def test_every_fault_has_exactly_one_implementation() -> None:
    implemented = Counter(i.name for i in REGISTERED)
    assert sorted(set(FAULTS) - set(implemented)) == [], "faults of faults.toml without an implementation"
    assert sorted(set(implemented) - set(FAULTS)) == [], "implementations of no fault of faults.toml"
    assert sorted(name for name, count in implemented.items() if count > 1) == [], "faults implemented twice"


def test_every_must_clause_is_broken_by_some_fault() -> None:
    broken = {f.clause for f in FAULTS.values()}
    must = {cid for cid, c in registry().items() if c.level == "MUST" and cid != CATCH_ALL}
    assert sorted(must - broken) == []


def test_catalog_is_large_enough() -> None:
    assert len(FAULTS) >= 100 and len(VARIANTS) - 1 >= 20
