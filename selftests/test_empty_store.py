"""On a store that starts empty, the suite decides every clause, whatever the service chose where the
document is silent: an omitted status left absent, a page cap, an order, a lenient parser.

The store as the suite sees it (``judging/store.py``, ``run/looks.py``): set-up's refused creates go first
and the unfiltered page right after them is empty (create.reject.nothing-created, at any page cap); each
status page right after the first own animal of each status holds one known animal (list.status.found, at
a page cap of two or more); a rule about a header the service may leave out is *not applicable* when it is
left out (read.sunset).  What no black-box client can decide stays undecided, each with its reason
(``BLACK_BOX``, docs/judging-rules.md "What no client can decide on an empty store").

Tier 1 runs two compliant variants that once left a clause undecided; tier 2 runs every compliant variant
of the kill matrix that starts empty and every compliant blind server on its empty store.
"""

from __future__ import annotations

from typing import Any

import pytest

from blind_scores import BlindScenario, run_blind_catalog
from blind_scores import scenarios as blind_scenarios
from devtools.catalog import VARIANTS
from devtools.killmatrix import QUICK, Scenario, run_catalog, run_scenario
from hosted import run_hosted, side_by_side

# A page cap of C < n shows at most C of n animals to any client (§4.4: no paging beyond limit is shown).
PAST_THE_CAP = "a page cap below the number of animals the suite creates hides some of them from every page"
ONE_A_PAGE = "a page cap of one: no page shows two animals, so no page is shorter than one the run saw"
# The clauses no black-box client can decide on these servers, by server, each with its reason.
BLACK_BOX: dict[str, dict[str, str]] = {
    **{name: {"list.found": PAST_THE_CAP} for name in ("capped", "capped-10", "capped-50")},
    "capped-1": {
        "list.found": PAST_THE_CAP,
        "list.status.found": ONE_A_PAGE,
        # The reference takes a valid NewPet sent as text/plain (201): the page after the refusals holds it.
        "create.reject.nothing-created": ONE_A_PAGE + ", and one of the refused creates was taken",
    },
    **{name: {"list.found": PAST_THE_CAP} for name in ("page_cap_25", "blind2/page_cap_50", "blind4/php_cap_50")},
}
# Tier 1: an omitted status left out of the answer, and pages capped at 7 (both left create.reject.nothing-created
# undecided; the capped one list.status.found too).
TIER_1 = ("status-omitted", "capped")


def _undecided(summary: dict[str, Any]) -> dict[str, str]:
    return {
        c["id"]: "; ".join(n["reason"] for n in c.get("notes", ()))
        for c in summary.get("clauses", ())
        if c["outcome"] == "undecided"
    }


def _assert_decided(name: str, summary: dict[str, Any], verdict: str) -> None:
    assert verdict == "conformant", f"{name}: {verdict} ({summary.get('reason')})"
    undecided = _undecided(summary)
    allowed = BLACK_BOX.get(name, {})
    assert set(undecided) <= set(allowed), f"{name}: undecided {sorted(set(undecided) - set(allowed))}: {undecided}"


def _empty_variants() -> list[str]:
    """Every compliant variant of the kill matrix that starts with an empty store."""
    return [name for name, variant in VARIANTS.items() if not variant.preload]


@pytest.fixture(scope="module")
def tier_1_runs() -> dict[Scenario, Any]:
    chosen = [Scenario("variant", name) for name in TIER_1]
    return side_by_side(chosen, lambda scenario: run_scenario(scenario, QUICK, run_hosted), parallel=2)


@pytest.mark.parametrize("name", TIER_1)
def test_a_variant_that_left_a_clause_undecided_is_decided(tier_1_runs: dict[Scenario, Any], name: str) -> None:
    run = tier_1_runs[Scenario("variant", name)]
    _assert_decided(name, run.summary, run.verdict)
    outcomes = {c["id"]: c["outcome"] for c in run.summary["clauses"]}
    assert outcomes["create.reject.nothing-created"] == "conforms", run.summary["reason"]
    assert outcomes["list.status.found"] == "conforms", run.summary["reason"]


@pytest.mark.tier_2
def test_every_compliant_variant_on_an_empty_store_decides_every_clause() -> None:
    runs = run_catalog([Scenario("variant", name) for name in _empty_variants()], parallel=2)
    for scenario, run in runs.items():
        _assert_decided(scenario.name, run.summary, run.verdict)


@pytest.mark.tier_2
def test_every_compliant_blind_server_on_an_empty_store_decides_every_clause() -> None:
    chosen = [s for s in blind_scenarios() if s.kind == "compliant" and not s.preload]
    runs: dict[BlindScenario, Any] = run_blind_catalog(chosen, parallel=2)
    for scenario, run in runs.items():
        if run.verdict == "unavailable":
            continue  # its language runtime is missing here (blind_scores.unavailable)
        _assert_decided(scenario.key, run.summary, run.verdict)


def test_every_listed_server_exists() -> None:
    """``BLACK_BOX`` names servers of the catalogs, never a stale one."""
    known = set(VARIANTS) | {s.key for s in blind_scenarios() if s.kind == "compliant"}
    assert set(BLACK_BOX) <= known, sorted(set(BLACK_BOX) - known)
