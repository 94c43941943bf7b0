"""A create whose answer was lost is looked up by its unique name (``run/lookup.py``), against the reference."""

from __future__ import annotations

import secrets

from petstore_contract.reference import BackgroundServer, build_app
from petstore_contract.run import lookup
from petstore_contract.run.api import Api, Unanswered
from petstore_contract.transport import TargetProblem
from transportkit import KEY

LOST = "POST http://127.0.0.1:9/v1/pets: connection reset by the target; " + lookup.LOST + ": it may have been applied"


def test_a_lost_create_is_found_by_its_unique_name_and_only_then(make_transport) -> None:
    with BackgroundServer(build_app(KEY)) as server:
        api = Api(make_transport(server.base_url), KEY)
        applied = {"name": f"lookup-{secrets.token_hex(4)}", "categoryId": 7, "status": "sold"}
        assert api.post("/pets", json_body=applied).status == 201  # applied; its answer "lost" below
        never = {"name": f"lookup-{secrets.token_hex(4)}", "categoryId": 7, "status": "sold"}
        answered = api.post("/pets", json_body={"name": "answered", "categoryId": 1})
        twice = {"name": "twin", "categoryId": 3}
        for _ in "ab":
            assert api.post("/pets", json_body=twice).status == 201
        lost = Unanswered(TargetProblem(LOST))
        found = lookup.look_up(
            api, [applied, never, {"name": "answered", "categoryId": 1}, twice], [lost, lost, answered, lost]
        )
    # Found only where one animal holds the lost create's name and category; an answered create is not looked up.
    assert list(found) == [0] and (found[0]["name"], found[0]["categoryId"]) == (applied["name"], 7), found
    assert api.transport.guard.counters()["writes_found"] == 1
