"""Two runs in a row against the same server both pass; the second creates only what the store lacks.

The first run on an empty store fills it to 101 animals (so that "never more than 100" can be
seen); the second finds a full page and creates only its own animals and what its tests create.
Names carry each run's id, so a server that rejects duplicate names passes both runs too.
"""

from __future__ import annotations

import secrets

import pytest

from devtools.catalog import VARIANTS
from gatekit import QUICK
from hosted import run_hosted
from petstore_contract.reference import BackgroundServer, build_app


# Tier 2: in tier 1 the kill matrix's crowded reference judges a store that holds animals the run did not create.
@pytest.mark.tier_2
@pytest.mark.parametrize("variant", ["reference", "unique-names"])
def test_two_runs_in_a_row_both_pass(variant: str) -> None:
    key = "repeat-" + secrets.token_urlsafe(12)
    app = build_app(key, VARIANTS[variant])
    store = app.state.store
    with BackgroundServer(app) as server:
        first = run_hosted(server.base_url, key, *QUICK)
        after_first = len(store.pets)
        second = run_hosted(server.base_url, key, *QUICK)
        grown = len(store.pets) - after_first
    assert first.verdict == second.verdict == "conformant", (first.summary.get("reason"), second.summary.get("reason"))
    assert first.summary["run_id"] != second.summary["run_id"]
    assert after_first >= 101, "the first run brings the store to more than one full page"
    assert second.count("writes") < first.count("writes"), "the second run needs no fillers"
    assert 0 < grown <= second.count("writes"), "the store grows by what the run created, no more"
