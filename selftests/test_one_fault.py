"""One fault, one clause, the rest decided: a server that breaks one sentence still has every other clause
judged (docs/judging-rules.md, "One fault, one clause").

Set-up takes what the answers show where the document leaves no doubt: a create answered 200 with a Pet and
its id made that animal (``spec.animal_made``), so the answer's status is create.created's violation and
every clause that needs the suite's animals is judged on them.  Each principle of the rule (``PRINCIPLES``,
as data) names the faults it decides everything beside: tier 1 runs the catalog's 200-for-201 fault and two
faults of each principle; tier 2 runs the rest of each, held to ``devtools.undecided.EXCEPTIONS``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest

from devtools.catalog import FAULTS
from devtools.killmatrix import QUICK, Scenario, acceptable, caught, run_catalog, run_scenario
from devtools.launcher import SuiteRun
from devtools.undecided import EXCEPTIONS, unexplained
from hosted import run_hosted

ROOT = Path(__file__).resolve().parents[1]
PLAIN = "test_plain_new_pet_is_created_and_echoed"
# Faults that break one sentence of a create's status, a header or a media type.
SINGLE_SENTENCE = (
    "create_returns_200",
    "create_rejects_sold",
    "read_no_deprecation",
    "read_deprecation_http_date",
    "read_deprecation_in_future",
    "read_deprecation_boolean",
    "read_deprecation_even_ids",
    "deprecation_on_list",
    "read_sunset_wrong_day",
    "read_sunset_not_http_date",
    "auth_no_challenge",
    "auth_basic_challenge",
    "auth_orders_no_challenge",
    "list_text_plain",
    "error_html_content_type",
)


def _hosted(base_url: str | None, api_key: str | None, *args: str) -> SuiteRun:
    return run_hosted(base_url, api_key, *args, keep=("summary.json", "junit.xml"), timeout=300)


@pytest.fixture(scope="module")
def returns_200() -> SuiteRun:
    return run_scenario(Scenario("fault", "create_returns_200"), QUICK, _hosted)


def test_a_create_answered_200_with_its_pet_violates_create_created_alone(returns_200: SuiteRun) -> None:
    run = returns_200
    # What the kill matrix demands of the fault (its tier-1 run of the area: selftests/tiers.py), and more.
    assert acceptable(Scenario("fault", "create_returns_200"), run), (run.verdict, sorted(run.violated()))
    assert "create.created" in run.violated()
    left = {u.clause: u.reason for u in unexplained("create_returns_200", run)}
    assert not left, f"undecided beside the violated clauses: {left}"


def test_the_plain_create_test_fails_on_create_created_with_the_exchange(returns_200: SuiteRun) -> None:
    cases = ET.fromstring(returns_200.reports["junit.xml"]).iter("testcase")
    plain = [case for case in cases if case.get("name", "").startswith(PLAIN)]
    assert len(plain) == 3, [case.get("name") for case in plain]
    for case in plain:
        assert case.find("skipped") is None, f"{case.get('name')} skipped: {ET.tostring(case)[:400]!r}"
        failure = case.find("failure")
        assert failure is not None, case.get("name")
        assert "create.created" in (failure.get("message") or ""), failure.get("message")
    created = next(c for c in returns_200.summary["clauses"] if c["id"] == "create.created")
    mine = [f for f in created["findings"] if PLAIN in (f.get("test") or "")]
    assert mine and all(f["exchange"] and f["exchange"]["status"] == 200 for f in mine), mine[:1]


def test_every_exception_names_a_fault_and_is_documented() -> None:
    rules = (ROOT / "docs" / "judging-rules.md").read_text(encoding="utf-8")
    for fault, clause in EXCEPTIONS:
        assert fault in FAULTS, fault
        assert f"`{fault}`" in rules and f"`{clause}`" in rules, (fault, clause)
    assert {name for p in PRINCIPLES for name in (*p.shown_by, *p.more)} <= set(FAULTS)


@dataclass(frozen=True)
class Principle:
    """One rule of "one fault, one clause" (docs/judging-rules.md), the faults it decides everything beside:
    two in tier 1 (``shown_by``), the rest in tier 2 (``more``), where ``only`` (a clause prefix) limits the
    clauses held, the others being held by their own principle's faults."""

    name: str
    shown_by: tuple[str, ...]
    more: tuple[str, ...]
    only: str = ""


PRINCIPLES = (
    # One sentence of a create's status, a missing or wrong header, a wrong Content-Type.
    Principle("one-sentence", (), SINGLE_SENTENCE),
    # A targeted test's finding beside clauses with nothing to judge on its exchanges: a 400 Error without its
    # code where a spelling test would judge an echo (the test ran to its end: ``Judge.finished``), a 500 to one
    # valid create (no Pet: ``expect.made_nothing``); a page read for what the clause needs, an id spelled as a
    # string, no read answered 200, an intermittent 5xx.
    Principle(
        "nothing-to-judge",
        ("error_missing_code", "create_500_on_category_minus_one"),
        (
            "create_ascii_names",
            "create_accepts_missing_category",
            "create_accepts_null_status",
            "create_id_string",
            "read_forgets_pets",
            "auth_read_rejects_valid_key",
            "orders_500_first",
        ),
    ),
    # A list clause reads only the part of a page it needs; a refused grid query is nothing to judge for the
    # clauses the other pages decide; pages that cannot show what a clause reads, reads or ids shown wrong,
    # leave only the exceptions and what their blocker explains; a create that replaced a held animal still leaves
    # the store its 101 animals.
    Principle(
        "list-part",
        ("list_item_missing_category", "list_rejects_limit_1"),
        (
            "list_item_id_string",
            "list_item_status_uppercase",
            "list_wraps_array",
            "list_500_on_filtered_small_page",
            "create_ids_repeat_after_100",
            "create_replaces_held_id",  # no new animal: the fillers count the distinct ids set-up made
            "read_forgets_pets",
            "read_changes_name",
            "read_invents_future_ids",
        ),
        only="list.",
    ),
    # A refused credential answered otherwise than the document says: a 403's Error body, a key elsewhere
    # answered as no credential at all, a refusal cut short.
    Principle(
        "refused-credential",
        ("auth_missing_403", "http_refusal_cut_short"),
        (
            "auth_403",
            "auth_415_before_key",
            "auth_accepts_basic",
            "auth_any_key",
            "auth_create_validates_first",
            "auth_key_prefix",
            "auth_list_validates_first",
            "auth_open_create",
            "auth_open_list",
            "auth_open_orders",
            "auth_open_read",
            "auth_orders_rejects_valid_key",
            "read_unknown_400",
        ),
    ),
)


@pytest.mark.parametrize(
    "fault", [pytest.param(name, id=f"{p.name}-{name}") for p in PRINCIPLES for name in p.shown_by]
)
def test_a_fault_leaves_every_other_clause_decided(fault: str) -> None:
    scenario = Scenario("fault", fault)
    run = run_scenario(scenario, QUICK, _hosted)
    # What the kill matrix demands (tier 1's run of the fault's area: selftests/tiers.py), and more.
    assert acceptable(scenario, run), (run.verdict, sorted(run.violated()), run.summary.get("tests"))
    left = {u.clause: (u.kinds, u.reason) for u in unexplained(fault, run)}
    assert not left, f"undecided beside the violated clauses: {left}"


@pytest.mark.tier_2
@pytest.mark.parametrize("principle", PRINCIPLES, ids=[p.name for p in PRINCIPLES])
def test_every_fault_of_a_principle_leaves_only_its_exceptions_undecided(principle: Principle) -> None:
    runs = run_catalog([Scenario("fault", name) for name in principle.more], parallel=2)
    left = {
        s.name: [u.clause for u in unexplained(s.name, run) if u.clause.startswith(principle.only)]
        for s, run in runs.items()
    }
    assert not {name: clauses for name, clauses in left.items() if clauses}
    assert all(caught(s, run) for s, run in runs.items()), {s.name: sorted(r.violated()) for s, r in runs.items()}


def _summary(*clauses: tuple[str, str, str]) -> dict[str, object]:
    rows = [{"id": c, "outcome": o, "notes": [{"kind": k, "reason": "r"}] if k else []} for c, o, k in clauses]
    return {"verdict": "not_conformant", "clauses": rows}


def test_the_self_proof_counts_the_faults_that_leave_a_clause_undecided_unexplained() -> None:
    """The kill matrix's own runs on the empty store give issue 58's figure (``proof_table.one_fault_left``):
    an undecided clause beside the violated one counts, an excepted one does not, a crowded run is not counted."""
    import proof_table

    excepted_fault, excepted_clause = next(iter(EXCEPTIONS))
    results = {
        Scenario("fault", "create_returns_200"): SuiteRun(
            1, 1.0, _summary(("create.created", "violated", ""), ("create.echo", "undecided", "precondition"))
        ),
        Scenario("fault", excepted_fault): SuiteRun(
            1, 1.0, _summary((FAULTS[excepted_fault].clause, "violated", ""), (excepted_clause, "undecided", "x"))
        ),
        Scenario("fault", "create_returns_200", "crowded"): SuiteRun(
            1, 1.0, _summary(("create.created", "violated", ""), ("create.id", "undecided", "precondition"))
        ),
        Scenario("variant", next(iter(FAULTS))): SuiteRun(0, 1.0, {"verdict": "conformant", "clauses": []}),
    }
    assert proof_table.one_fault_left(results) == ["create_returns_200"]
    figure = proof_table.kill_matrix_figures(results)
    assert figure["faults leaving another clause undecided, unexplained (empty store)"] == [1, 2]
