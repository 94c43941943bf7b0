"""A run stopped by -x (or --maxfail) never claims "conformant" on the clauses it happened to reach.

Found by the mutation run: a test fails on a SHOULD clause too (a warning, not a violation), so ``-x``
stopped a run there and the suite judged the few tests that had run: "Conformant: 5 of 6 clauses
conform", exit 0.  The tests after the stop were never run; the run is inconclusive.
"""

from __future__ import annotations

import secrets

import pytest

from devtools.catalog import VARIANTS, catalog_app
from hosted import run_hosted
from petstore_contract.reference import BackgroundServer, build_app

QUICK = ("--contract-profile", "quick")


@pytest.mark.tier_2  # tier 1: the stop at a violation, below
def test_stop_at_a_should_failure_is_inconclusive() -> None:
    # `minimal` is compliant, but its challenge names an error code even without credentials (the
    # RFC 6750 §3.1 SHOULD NOT): a warning, and a failed test at which -x stops.
    key = "stop-" + secrets.token_urlsafe(12)
    with BackgroundServer(build_app(key, VARIANTS["minimal"])) as server:
        whole = run_hosted(server.base_url, key, *QUICK)
        stopped = run_hosted(server.base_url, key, *QUICK, "-x")
    assert whole.verdict == "conformant" and whole.exit_code == 0, whole.output[-2000:]
    assert stopped.summary["tests"]["tests"] < whole.summary["tests"]["tests"]  # -x did stop it
    assert stopped.verdict == "inconclusive" and stopped.exit_code == 6, stopped.output[-2000:]
    assert "stopped early" in stopped.summary["reason"]


def test_stop_at_a_violation_is_still_not_conformant() -> None:
    key = "stop-" + secrets.token_urlsafe(12)
    with BackgroundServer(catalog_app(key, fault="error_status_string")) as server:
        stopped = run_hosted(server.base_url, key, *QUICK, "-x")
    assert stopped.verdict == "not_conformant" and stopped.exit_code == 1, stopped.output[-2000:]
    assert "errors.body" in stopped.violated()
