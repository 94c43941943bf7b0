"""The suite proves itself: it fails every faulty server on the right clause and passes every
compliant variant.  Each server is checked as a user would: pytest in a subprocess with
--base-url and the key in the environment.  The kill matrix is printed at the end of the run.
"""

from __future__ import annotations

import pytest

from petstore_contract.clauses import registry
from petstore_contract.killmatrix import GENERATED_MODULES, Outcomes
from petstore_contract.reference import FAULTS, VARIANTS


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_fault_is_caught_on_its_clause(catalog: Outcomes, fault: str) -> None:
    run = catalog.faults[fault]
    assert run.exit_code == 1, f"suite exit code {run.exit_code} against fault {fault}:\n{run.output[-2000:]}"
    assert FAULTS[fault].clause in run.caught_clauses(), (
        f"{fault} breaks {FAULTS[fault].clause}, but the failing tests name {sorted(run.caught_clauses())}"
    )


@pytest.mark.parametrize("fault", sorted(f.name for f in FAULTS.values() if f.generated_only))
def test_generated_tests_catch_what_targeted_tests_miss(catalog: Outcomes, fault: str) -> None:
    failing = catalog.faults[fault].failed
    assert failing, f"nothing caught {fault}"
    targeted = [t for t in failing if not t.startswith(GENERATED_MODULES)]
    assert not targeted, f"{fault} is meant to be found only by generated tests, but {targeted} caught it"


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_compliant_server_passes(catalog: Outcomes, variant: str) -> None:
    run = catalog.variants[variant]
    assert run.exit_code == 0, f"false alarm on compliant variant {variant}: {sorted(run.failed)}\n{run.output[-3000:]}"
    assert run.passed > 100


def test_every_fault_names_a_known_clause() -> None:
    unknown = {f.name: f.clause for f in FAULTS.values() if f.clause not in registry()}
    assert not unknown


def test_every_clause_is_broken_by_some_fault() -> None:
    broken = {f.clause for f in FAULTS.values()}
    assert sorted(set(registry()) - broken) == []


def test_catalog_is_large_enough() -> None:
    assert len(FAULTS) >= 40 and len(VARIANTS) - 1 >= 6
