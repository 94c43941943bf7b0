"""One judging pipeline (judging/pipeline.py), its checks declared once (judging/checks.py), one store model.

- Every answer of a whole run is judged, set-up's included, in every process (``-n 2`` too): the
  pipeline's judgements against the requests the server itself counted.
- A plain valid NewPet refused during set-up is a ``create.created`` violation with its exchange, on an
  empty and on a crowded store (where only set-up sends it), never an inconclusive run.
- The pipeline's checks, one observed exchange at a time: each finding on its clause, nothing said about
  what the document leaves open.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import requests

from devtools.killmatrix import CROWDED, EMPTY, Scenario, run_scenario
from gatekit import QUICK
from hosted import run_hosted
from loopback import Counted
from petstore_contract.core.redaction import Redactor
from petstore_contract.judging import checks as rejudge
from petstore_contract.judging.declaration import Kind
from petstore_contract.judging.pipeline import TEST, Pipeline
from petstore_contract.reference import REFERENCE, BackgroundServer, build_app
from petstore_contract.transport import Observed
from petstore_contract.transport.answers import seen_answer

KEY = "pipeline-selftest-key-7c1d"


# Tier 1 under xdist, where a worker's answers have the furthest to go; tier 2 in one process too.
@pytest.mark.parametrize("mode", [pytest.param((), marks=pytest.mark.tier_2), ("-n", "2")], ids=["one process", "-n 2"])
def test_every_answer_of_a_run_is_judged(mode: tuple[str, ...]) -> None:
    counted = Counted(build_app(KEY, REFERENCE))
    with BackgroundServer(counted) as server:  # type: ignore[arg-type]
        run = run_hosted(server.base_url, KEY, *QUICK, *mode)
    facts = run.summary  # summary.json holds the run's counters at its top level
    assert run.verdict == "conformant", run.output[-2000:]
    assert facts["requests"] == counted.requests  # the suite's count is the server's
    assert facts["judged"] + facts["unanswered"] == facts["requests"]
    # Every answer the server gave was judged, but a redirect's hop (the /pets/ of tests/test_outside.py,
    # which Starlette redirects to /pets): the transport follows it and the answer it leads to is judged.
    assert facts["judged"] == counted.requests - counted.redirects
    assert facts["unanswered"] == counted.redirects


@pytest.mark.parametrize("store", [EMPTY, pytest.param(CROWDED, marks=pytest.mark.tier_2)])
def test_a_valid_create_refused_during_set_up_violates_create_created(store: str) -> None:
    run = run_scenario(Scenario("fault", "create_rejects_sold", store))
    assert run.verdict == "not_conformant", run.output[-2000:]
    assert run.violated() == {"create.created"}
    created = next(c for c in run.summary["clauses"] if c["id"] == "create.created")
    refused = [f for f in created["findings"] if f["exchange"] and f["exchange"]["status"] == 400]
    assert refused and all('"sold"' in (f["exchange"]["request_body"] or "") for f in refused)
    if store == CROWDED:  # only set-up sent a plain sold NewPet: the pipeline judged its answer
        assert any(f["test"] == TEST for f in refused)


# -- the pipeline, one observed exchange at a time --------------------------------------------------------


def _observed(method: str, path: str, status: int, body: Any, *, key: str | None = KEY, **headers: str) -> Observed:
    sent = {"Authorization": f"Bearer {key}"} if key is not None else {}
    request = requests.Request(method, f"http://127.0.0.1:1/v1{path}", headers=sent, json=None).prepare()
    if method == "POST" and isinstance(body, tuple):
        request = requests.Request(method, request.url, headers=sent, json=body[0]).prepare()
        body = body[1]
    answer_headers = {"content-type": "application/json", **headers}
    fields, content = tuple(answer_headers.items()), json.dumps(body).encode()
    return Observed(
        request, 0.0, 0.0, answer=seen_answer(Redactor(KEY, "PETSTORE_API_KEY"), request, status, fields, content)
    )


def _clauses(pipeline: Pipeline, seen: Observed) -> list[str]:
    pipeline(seen)
    return [finding.clause for finding in pipeline.findings]


def _pipeline() -> Pipeline:
    return Pipeline(KEY, Redactor(KEY, "PETSTORE_API_KEY"), "run1")


PET = {"id": 7, "name": "Rex", "categoryId": 1, "status": "sold"}
ERROR_401 = {"code": "unauthorized", "message": "no", "status": 401}


def test_a_401_without_a_bearer_challenge_is_auth_challenge() -> None:
    assert _clauses(_pipeline(), _observed("GET", "/pets", 401, ERROR_401, key=None)) == ["auth.challenge"]


def test_a_401_with_its_challenge_says_nothing() -> None:
    seen = _observed("GET", "/pets", 401, ERROR_401, key=None, **{"www-authenticate": 'Bearer realm="x"'})
    assert _clauses(_pipeline(), seen) == []


def test_an_answer_without_the_key_that_is_no_401_is_the_credential_clause_s() -> None:
    assert _clauses(_pipeline(), _observed("GET", "/pets", 403, ERROR_401, key="wrong")) == ["auth.invalid"]
    assert _clauses(_pipeline(), _observed("GET", "/pets", 200, [PET], key=None)) == ["auth.missing"]


def test_a_plain_new_pet_refused_is_create_created_and_an_unusual_one_is_not() -> None:
    error = {"code": "bad", "message": "no", "status": 400}
    plain = ({"name": "pc-run1-own-0", "categoryId": 100, "status": "sold"}, error)
    assert _clauses(_pipeline(), _observed("POST", "/pets", 400, plain)) == ["create.created"]
    long_name = ({"name": "pc-run1-" + "x" * 60, "categoryId": 100}, error)
    unusual = ({"name": "pc-run1-\u00e9", "categoryId": 100}, error)
    huge = ({"name": "pc-run1-own-1", "categoryId": 2**53}, error)
    for body in (long_name, unusual, huge):
        assert _clauses(_pipeline(), _observed("POST", "/pets", 400, body)) == []


def test_shapes_media_type_and_deprecation_scope_each_on_its_clause() -> None:
    assert _clauses(_pipeline(), _observed("GET", "/pets", 200, {"items": [PET]})) == ["list.shape"]
    assert _clauses(_pipeline(), _observed("GET", "/pets/7", 200, {"id": "7"})) == ["read.found"]
    wrong = {"code": "x", "message": "y", "status": 400}
    assert _clauses(_pipeline(), _observed("GET", "/pets/7", 404, wrong)) == ["errors.body"]
    text = _observed("GET", "/pets", 200, [PET], **{"content-type": "text/plain"})
    assert _clauses(_pipeline(), text) == ["json.content-type"]
    deprecated = _observed("GET", "/pets", 200, [PET], deprecation="@1")
    assert _clauses(_pipeline(), deprecated) == ["deprecation.scope"]
    assert _clauses(_pipeline(), _observed("GET", "/pets", 503, {})) == ["responses.documented"]
    assert _clauses(_pipeline(), _observed("GET", "/store/orders", 500, {})) == ["orders.available"]


def test_a_listed_animal_that_differs_from_its_read_is_list_item_same() -> None:
    pipeline = _pipeline()
    assert _clauses(pipeline, _observed("GET", "/pets/7", 200, PET)) == []
    assert _clauses(pipeline, _observed("GET", "/pets", 200, [{**PET, "categoryId": 2}])) == ["list.item.same"]
    # A status the service chose is fixed once shown; one answer that leaves it out says nothing.
    quiet = _pipeline()
    assert _clauses(quiet, _observed("GET", "/pets/7", 200, {k: v for k, v in PET.items() if k != "status"})) == []
    assert _clauses(quiet, _observed("GET", "/pets", 200, [PET])) == []


def test_a_read_of_an_id_that_is_no_int64_is_left_to_read_not_found() -> None:
    placeholder = {"id": 2**63, "name": "unknown", "categoryId": 0}
    assert _clauses(_pipeline(), _observed("GET", f"/pets/{2**63}", 200, placeholder)) == []


def test_an_animal_listed_then_read_as_absent_is_read_found() -> None:
    pipeline = _pipeline()
    pipeline(_observed("GET", "/pets", 200, [PET]))
    assert _clauses(pipeline, _observed("GET", "/pets/7", 404, {"code": "n", "message": "m", "status": 404})) == [
        "read.found"
    ]


def test_an_animal_made_from_accepted_invalid_data_is_left_to_its_rejection_clause() -> None:
    pipeline = _pipeline()
    accepted = ({"name": "x", "categoryId": 1.5}, {**PET, "categoryId": 1.5})
    assert _clauses(pipeline, _observed("POST", "/pets", 201, accepted)) == []
    assert _clauses(pipeline, _observed("GET", "/pets", 200, [{**PET, "categoryId": 1.5}])) == []


def test_every_kind_has_one_registry_entry_and_placements_come_from_the_sources() -> None:
    assert set(rejudge.REGISTRY) >= set(Kind)
    assert rejudge.clause_of(Kind.NO_SERVER_ERROR, "listOrders", 500) == "orders.available"  # no shape shown
    assert rejudge.clause_of(Kind.NO_SERVER_ERROR, "listPets", 500) == "responses.documented"
    assert rejudge.clause_of(rejudge.DOCUMENTED_STATUS, "createPet", 200) == "create.created"
    assert rejudge.clause_of(Kind.PET_LIST, "listPets", 200) == "list.shape"
    reaskable = {kind for kind, entry in rejudge.REGISTRY.items() if entry.reaskable}
    assert Kind.BEARER_CHALLENGE in reaskable and Kind.SAME_ANIMAL not in reaskable
