"""No clause conforms unexamined: the suite mutated so that its checks judge nothing.

With the self-test plugin ``selftests/plugins/unjudged.py`` naming clauses (or ``all``), every ``with
judge(clause)`` block of those clauses and every count of their judgements becomes a no-op, as if the
check had returned early.  Each such clause must then end *undecided (not exercised)*, never *conforms*, and the run
must not be conformant; the clauses left alone keep conforming.
"""

from __future__ import annotations

import pytest

from devtools import SuiteRun
from gatekit import QUICK
from hosted import run_hosted
from petstore_contract.interface.clauses import CATCH_ALL, registry

# Inline: the plugin is loaded into the run's process (a child process of the run would not load it).


def unjudged(clauses: str) -> SuiteRun:
    """The suite run with the named clauses' judgements made no-ops by the self-test plugin."""
    return run_hosted(None, None, *QUICK, "-p", "unjudged", "--unjudged", clauses, timeout=300)


@pytest.mark.tier_2  # tier 1: the groups below, each clause made a no-op once and the others still conform
def test_with_every_judgement_a_no_op_no_clause_conforms() -> None:
    run = unjudged("all")
    assert run.verdict == "inconclusive", run.output[-2000:]
    assert run.clauses("conforms") == set()
    expected = {cid for cid in registry() if cid != CATCH_ALL}
    assert run.clauses("undecided") == expected
    reasons = {c["id"]: {n["kind"] for n in c["notes"]} for c in run.summary["clauses"]}
    assert all("not_exercised" in kinds for cid, kinds in reasons.items() if cid in expected), reasons


# Tier 2: in tier 1, the groups below make every check a no-op.
@pytest.mark.tier_2
@pytest.mark.parametrize("clause", ["read.deprecation", "auth.challenge.quiet"])
def test_one_check_made_a_no_op_leaves_its_clause_undecided(clause: str) -> None:
    run = unjudged(clause)
    assert run.clauses("undecided") == {clause}, (run.clauses("undecided"), run.output[-2000:])
    assert run.verdict == "inconclusive" if registry()[clause].level == "MUST" else run.verdict == "conformant"
    row = next(c for c in run.summary["clauses"] if c["id"] == clause)
    assert row["exchanges"] == 0 and row["notes"][0]["kind"] == "not_exercised", row


# Every check, in a few runs: the clauses dealt into groups, each group's judgements made no-ops at once.
# Tier 2 deals them into 6 groups (a check that leans on another's judgement shows in a small group);
# tier 1 into 2, every check still made a no-op once.
GROUPS_TIER_1, GROUPS_TIER_2 = 2, 6
EVERY_CLAUSE = sorted(cid for cid in registry() if cid != CATCH_ALL)
GROUP_PARAMS = [
    pytest.param(n, id=f"group-{n + 1}", marks=() if n < GROUPS_TIER_1 else pytest.mark.tier_2)
    for n in range(GROUPS_TIER_2)
]


@pytest.mark.parametrize("group", GROUP_PARAMS)
def test_every_check_made_a_no_op_leaves_its_clause_undecided(group: int, whole_self_proof: bool) -> None:
    chosen = set(EVERY_CLAUSE[group :: GROUPS_TIER_2 if whole_self_proof else GROUPS_TIER_1])
    run = unjudged(",".join(sorted(chosen)))
    assert run.clauses("undecided") == chosen, (sorted(run.clauses("undecided") ^ chosen), run.output[-2000:])
    assert not run.clauses("conforms") & chosen
    assert run.clauses("conforms") == set(EVERY_CLAUSE) - chosen, run.output[-2000:]
