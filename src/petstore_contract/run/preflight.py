"""The pre-flight: before any test, whether the target can be judged at all, with the fewest requests.

The controller asks ``GET /pets?limit=1`` with the key.  A Pet Store answers it with a list of Pet
(or an Error); whatever else it gets decides, in a few more requests, whether the run can judge the
target (``Preflight.unjudged``, the run's one reason when it cannot):

- **No answer** (refused, timed out, reset, TLS refused): the same request is asked again until the
  circuit breaker opens (``--contract-circuit-breaker`` answers missed in a row, the rule every request
  of a run follows); an answer on the way lets the run go on.
- **401 with the key**: the key is asked once on every other operation: ``GET /pets/{petId}`` (an id
  probe: any answer but 401 accepts the key), ``GET /store/orders``, and, when every read refused it and
  the run may write, ``POST /pets`` with a plain valid NewPet of the suite's own.  The POST is sent
  because no read can prove that the key is refused on a write: a service that accepts the key on
  ``POST /pets`` alone breaks ``auth.accepted`` (*not conformant*) rather than leaving the run
  unjudged; refused, it creates nothing (a refused request changes nothing).  A read-only run sends no
  POST and says so.  Any operation that accepts the key lets the run go on (``auth.accepted`` judges
  the others).
- **Not the service**: when neither ``GET /pets``, nor an id probe ``GET /pets/{petId}``, nor
  ``GET /store/orders`` answers anything the document gives (a JSON list, a Pet, an Error, a 5xx
  the deployment may give), the base URL serves something else (an HTML page, another JSON API).

Each request goes through the run's transport: the pipeline judges its answer, the counters count it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from petstore_contract.interface.jsontypes import JsonObject
from petstore_contract.run.api import Api
from petstore_contract.transport import Answer, TargetProblem

LIST, ITEM, ORDERS, CREATE = "GET /pets", "GET /pets/{petId}", "GET /store/orders", "POST /pets"
PROBE_ID = 1  # any id: with the key, a Pet Store answers 200 or 404, never 401


@dataclass(frozen=True)
class Preflight:
    """What the pre-flight found: the header's one-line problem, and why the run cannot judge the target."""

    problem: str = ""  # shown in the header ("" when the first answer raised no doubt)
    unjudged: str = ""  # the run's one reason when nothing it could ask can be judged ("" when it can)
    round_trip: float = 0.0  # seconds the first request took


def check(api: Api, *, key_env: str, read_only: bool, new_pet: Callable[[], JsonObject]) -> Preflight:
    """The pre-flight requests (see the module's docstring); ``new_pet``: a plain valid NewPet of the run's own."""
    started = time.monotonic()
    try:
        first: Answer | TargetProblem = api.get("/pets", params={"limit": 1})
    except TargetProblem as exc:
        first = exc
    round_trip = time.monotonic() - started
    if isinstance(first, TargetProblem):
        return Preflight(str(first), _unreachable(api, first), round_trip)
    if first.status == 401:
        problem = f"the configured key was rejected (401 to GET /pets): check {key_env}"
        return Preflight(problem, _key_refused(api, key_env, read_only, new_pet), round_trip)
    other = _not_the_service(api, first)
    return Preflight(other, other, round_trip)  # the header names it too


def _unreachable(api: Api, problem: TargetProblem) -> str:
    """The first request got no answer: asked again until the breaker opens (or an answer comes)."""
    guard = api.transport.guard
    for _ in range(max(0, guard.circuit_breaker - 1)):
        if guard.breaker_open() or guard.stopped():
            break
        try:
            api.get("/pets", params={"limit": 1})
        except TargetProblem:
            continue
        return ""  # it answered after all: the run judges what it answers
    if not guard.breaker_open():
        return ""  # no breaker (--contract-circuit-breaker 0), or a redirect away: the run goes on
    cause = "answered too slowly" if "still arriving" in str(problem) else "did not answer"
    return f"the target {cause}: {problem}"


def _key_refused(api: Api, key_env: str, read_only: bool, new_pet: Callable[[], JsonObject]) -> str:
    """401 to GET /pets with the key: the key asked once on each other operation."""
    asked = [LIST]
    for operation, path in ((ITEM, f"/pets/{PROBE_ID}"), (ORDERS, "/store/orders")):
        if _accepted(api, "GET", path):
            return ""
        asked.append(operation)
    if read_only:
        where = f"every read operation (401 to {', '.join(asked)}; {CREATE} not asked: read-only run)"
    else:
        if _accepted(api, "POST", "/pets", new_pet()):
            return ""
        where = f"every operation (401 to {', '.join([*asked, CREATE])})"
    return f"the configured key was rejected on {where}: check {key_env}"


def _accepted(api: Api, method: str, path: str, body: JsonObject | None = None) -> bool:
    """The key was not refused: any answer but 401.  An unanswered request proves nothing either way, so
    the run goes on and judges what it can (its own rules for unanswered requests hold)."""
    try:
        answer = api.request(method, path) if body is None else api.request(method, path, json_body=body)
    except TargetProblem:
        return True
    return answer.status != 401


def _not_the_service(api: Api, first: Answer) -> str:
    """Nothing the document gives, on every read operation: the base URL serves something else."""
    answers = [(LIST, first)]
    if _like_the_service(LIST, first):
        return ""
    for operation, path in ((ITEM, f"/pets/{PROBE_ID}"), (ORDERS, "/store/orders")):
        try:
            answer = api.get(path)
        except TargetProblem:
            return ""  # unanswered: the run's own rules judge that
        if _like_the_service(operation, answer):
            return ""
        answers.append((operation, answer))
    seen = "; ".join(f"{operation} answered {_described(answer)}" for operation, answer in answers)
    return f"the target is not the Pet Store service: {seen}: check the base URL"


def _like_the_service(operation: str, answer: Answer) -> bool:
    """An answer the document could give this operation (its shape, not its details: the tests judge those)."""
    if answer.status >= 500:
        return True  # the service's or the deployment's: the run judges it, asked again (flicker.py)
    try:
        body = answer.json()
    except ValueError:
        return False
    if isinstance(body, dict) and "code" in body and "message" in body:
        return True  # an Error
    if not 200 <= answer.status < 300:
        return False
    if operation == LIST:
        return isinstance(body, list)
    if operation == ITEM:
        return isinstance(body, dict) and "id" in body
    return True  # GET /store/orders: its answer's schema is not shown


def _described(answer: Answer) -> str:
    media = (answer.headers.get("Content-Type") or "no Content-Type").split(";")[0].strip()
    try:
        answer.json()
        kind = "JSON of no shape the document gives"
    except ValueError:
        kind = "an HTML page" if answer.body.lstrip()[:1] == b"<" else "no JSON"
    return f"{answer.status} {media} ({kind})"
