"""No clause conforms unexamined: the suite mutated so that its checks judge nothing.

With the self-test plugin ``selftests/plugins/unjudged.py`` naming clauses (or ``all``), every ``with
judge(clause)`` block of those clauses and every count of their judgements becomes a no-op, as if the
check had returned early.  Each such clause must then end *undecided (not exercised)*, never *conforms*, and the run
must not be conformant; the clauses left alone keep conforming.
"""

from __future__ import annotations

import pytest

from devtools import SuiteRun
from hosted import run_hosted
from petstore_contract.interface.clauses import CATCH_ALL, registry

# Inline: the plugin is loaded into the run's process (a child process of the run would not load it).
QUICK = ("--contract-profile", "quick")


def unjudged(clauses: str) -> SuiteRun:
    """The suite run with the named clauses' judgements made no-ops by the self-test plugin."""
    return run_hosted(None, None, *QUICK, "-p", "unjudged", "--unjudged", clauses, timeout=300)


def test_with_every_judgement_a_no_op_no_clause_conforms() -> None:
    run = unjudged("all")
    assert run.verdict == "inconclusive", run.output[-2000:]
    assert run.clauses("conforms") == set()
    expected = {cid for cid in registry() if cid != CATCH_ALL}
    assert run.clauses("undecided") == expected
    reasons = {c["id"]: {n["kind"] for n in c["notes"]} for c in run.summary["clauses"]}
    assert all("not_exercised" in kinds for cid, kinds in reasons.items() if cid in expected), reasons


@pytest.mark.parametrize("clause", ["read.deprecation", "auth.challenge.quiet"])
def test_one_check_made_a_no_op_leaves_its_clause_undecided(clause: str) -> None:
    run = unjudged(clause)
    assert run.clauses("undecided") == {clause}, (run.clauses("undecided"), run.output[-2000:])
    assert run.verdict == "inconclusive" if registry()[clause].level == "MUST" else run.verdict == "conformant"
    row = next(c for c in run.summary["clauses"] if c["id"] == clause)
    assert row["exchanges"] == 0 and row["notes"][0]["kind"] == "not_exercised", row


# Every check, in a few runs: the clauses dealt into groups, each group's judgements made no-ops at once.
GROUPS = 6
EVERY_CLAUSE = sorted(cid for cid in registry() if cid != CATCH_ALL)


@pytest.mark.parametrize("group", range(GROUPS), ids=[f"group-{n + 1}" for n in range(GROUPS)])
def test_every_check_made_a_no_op_leaves_its_clause_undecided(group: int) -> None:
    chosen = set(EVERY_CLAUSE[group::GROUPS])
    run = unjudged(",".join(sorted(chosen)))
    assert run.clauses("undecided") == chosen, (sorted(run.clauses("undecided") ^ chosen), run.output[-2000:])
    assert not run.clauses("conforms") & chosen
    assert run.clauses("conforms") == set(EVERY_CLAUSE) - chosen, run.output[-2000:]
