"""-x (or --maxfail) stops a run at a violation, never at a warning.

Found by the mutation run: a test once failed on a SHOULD clause too (a warning, not a violation), so
``-x`` stopped a run there and the suite judged the few tests that had run.  A test that broke only
SHOULD clauses now passes (``plugin.classify.warned_only``): ``-x`` runs on past it and the run is
decided whole; a run stopped at a violation stays not conformant.
"""

from __future__ import annotations

import secrets

import pytest

from devtools.catalog import VARIANTS, catalog_app
from gatekit import QUICK
from hosted import run_hosted
from petstore_contract.reference import BackgroundServer, build_app


@pytest.mark.tier_2  # tier 1: the stop at a violation, below; -x past a gzip warning: test_verdict_story.py
def test_no_stop_at_a_should_warning() -> None:
    # `minimal` is compliant, but its challenge names an error code even without credentials (the
    # RFC 6750 §3.1 SHOULD NOT): a warning, a passed test, so -x runs on to the end.
    key = "stop-" + secrets.token_urlsafe(12)
    with BackgroundServer(build_app(key, VARIANTS["minimal"])) as server:
        whole = run_hosted(server.base_url, key, *QUICK)
        stopped = run_hosted(server.base_url, key, *QUICK, "-x")
    assert whole.verdict == "conformant" and whole.exit_code == 0, whole.output[-2000:]
    assert "auth.challenge.quiet" in whole.summary["reason"], whole.summary["reason"]  # the warning, named
    assert stopped.summary["tests"]["tests"] == whole.summary["tests"]["tests"]  # -x did not stop it
    assert stopped.verdict == "conformant" and stopped.exit_code == 0, stopped.output[-2000:]


def test_stop_at_a_violation_is_still_not_conformant() -> None:
    key = "stop-" + secrets.token_urlsafe(12)
    with BackgroundServer(catalog_app(key, fault="error_status_string")) as server:
        stopped = run_hosted(server.base_url, key, *QUICK, "-x")
    assert stopped.verdict == "not_conformant" and stopped.exit_code == 1, stopped.output[-2000:]
    assert "errors.body" in stopped.violated()
