"""One judging pipeline: every exchange of the run passes the checks that apply to its operation and status.

Whichever part of the run sent a request (the pre-flight request, set-up, the tables sent ahead, a
targeted test, a generated case, a stateful step, a re-ask), its answer passes the transport's
watchers (``GuardedAdapter.watchers``); the ``Pipeline`` is one of them, in every process, as
Schemathesis applies its ``@check`` functions to every response.  It reads where each answer stands
(``route``: the web server's own, a redirect, a credential refused, outside the document, one of its
operations), then runs every check declared for that route (``checks.py``, in the order declared), each
on its clause; no check is named here.  From the OpenAPI document (``interface/spec.py``) it judges what
holds for any answer whoever asked:

- no 5xx; a status the document lists for the operation;
- the body the document gives that status: a Pet, an array of Pet, an Error whose ``status`` is the
  HTTP status; the JSON media type on an answer with a body;
- no ``Deprecation``/``Sunset`` on the current operations (§9.3), a Bearer challenge on a 401;
- and, from the request alone, what the document decides: a plain valid NewPet of the suite's own
  (a short name of the run's own, a small categoryId, a PetStatus or none) sent with the valid key
  is created (201), whichever part of the run sent it (set-up's creates included); one answered another
  2xx with a Pet made that animal all the same: its status is create.created's finding, the rest of the
  answer is judged as a 201's, and its id counts as handed out (one fault, one clause);
- every Pet in every answer is one representation of its animal (``model.StoreModel``).

The targeted tests choose what to send and add their own assertions.  A finding the pipeline makes
is reported only where no test reported the same exchange, or already violated the same clause on the
same operation (``unreported``): one fault, one clause, no finding counted twice.  Each process
keeps its judgements and findings beside its counters (``RunGuard.tallies``); the controller merges
them (``merge``) into one record.  ``judged`` + ``unanswered`` is every request the process sent (a
redirect hop of a request the document does not describe is not judged: it counts as unanswered; one of
a request it describes is judged, and no 3xx is in its Responses table).
"""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from urllib.parse import unquote, unquote_plus

from requests import PreparedRequest

from petstore_contract.core.records import Finding, Mismatch
from petstore_contract.core.redaction import Redactor
from petstore_contract.interface.clauses import CLAUSE_IDS, ClauseId
from petstore_contract.interface.document import STATUSES
from petstore_contract.interface.jsontypes import JsonObject, JsonValue
from petstore_contract.interface.silence import SILENCES, Placed, classify
from petstore_contract.interface.spec import answer_schema, operation_id
from petstore_contract.judging import expect
from petstore_contract.judging.checks import clause_on
from petstore_contract.judging.coverage import new_pet
from petstore_contract.judging.declaration import DECLARED, Judged, Route
from petstore_contract.judging.ids import Handed
from petstore_contract.judging.model import StoreModel
from petstore_contract.judging.refusals import Refusals
from petstore_contract.transport import REDIRECTS, Observed
from petstore_contract.transport.answers import Answer, throttling

TEST = "(every exchange of the run): the checks that apply to every answer"
KEPT_PER_CHECK = 3  # findings kept per process for one clause and kind: evidence, not a log
PLAIN_NAME = 40  # name rules are not shown (§2); a service may refuse long names, never short plain ones
# The suite's ordinary animals use categories 1 to about 110.  Category values are not shown (§2): a
# service may keep a catalog and refuse zero, negative or large ones (the value edges); none refuses these.
PLAIN_CATEGORY = 1000


class Pipeline:
    """One process's pipeline (a watcher of its adapter): every answer judged, findings as plain data."""

    def __init__(self, api_key: str, redact: Redactor, run_id: str) -> None:
        self.key, self.redact = api_key, redact
        # The suite's own plain names (``Run.name``): pc-<run id>-<tag>, letters, digits and dashes.
        self.plain = re.compile(rf"pc-{re.escape(run_id)}-[A-Za-z0-9-]*") if run_id else None
        self.model = StoreModel()
        self._lock = threading.Lock()
        self.judged = 0
        self.unanswered = 0
        self.findings: list[Finding] = []
        self.admitted: set[int] = set()  # ids handed out for invalid data the service accepted
        self.refusals = Refusals(self.plain, TEST)  # refused creates held against every animal shown
        self.handed: list[Handed] = []  # every 201 of POST /pets: its id, when, its exchange (``ids``)
        self._kept: Counter[tuple[str, str]] = Counter()

    def __call__(self, seen: Observed) -> None:
        # A redirect of a request the document does not describe (a trailing slash, another case) is HTTP's
        # plumbing: the transport follows it within the target's origin (and the answer it leads to is
        # judged) or refuses to (the request is then unanswered: the key stays with the target).  A redirect
        # of a request the document describes is that operation's answer, and no 3xx is in its table.
        # An answer that never completed (``problem`` beside its status) is judged once, on the clause of the
        # request that got it (``expect.cut_short``): its body is not all there to be judged here.
        answer = seen.answer
        redirected = answer is not None and answer.status in REDIRECTS and _location(answer)
        if answer is None or seen.problem or (redirected and not _described(seen)):
            with self._lock:
                self.unanswered += 1
            return
        if redirected:
            found = self.judge(seen, answer, redirected=True)
        else:
            found = [] if _throttled(answer) else self.judge(seen, answer)
        with self._lock:
            self.judged += 1
            for finding in found:
                key = (finding.clause, finding.expectation.partition(":")[0])
                self._kept[key] += 1
                if self._kept[key] <= KEPT_PER_CHECK:
                    self.findings.append(finding)

    def judge(self, seen: Observed, answer: Answer, redirected: bool = False) -> list[Finding]:
        """Every declared check that applies to one answer (``seen``'s), each on its clause, in the order
        declared (a failed check stops the others only where it says so: ``Declared.halts``)."""
        request = seen.request
        method, url = request.method or "GET", request.url or ""
        operation = operation_id(method, url)
        placed = classify(method, url, request.headers, request.body)
        authorization = request.headers.get("Authorization")
        judged = Judged(
            answer,
            request,
            operation,
            placed,
            self.route(answer, request, operation, placed) if not redirected else Route.REDIRECT,
            self._credential_clause(request, authorization),
            self.admitted,
            self.model,
            self.refusals,
        )
        if judged.route is Route.DOCUMENTED:
            judged.schema = answer_schema(operation, answer.status)
        found: list[Finding] = []
        if _passes(True, judged, found):
            self._note(judged, seen.started)
            _passes(False, judged, found)
        return found

    def route(self, answer: Answer, request: PreparedRequest, operation: str, placed: Placed) -> Route:
        """Where an answer stands (``declaration.Route``), from its request and its status."""
        status = answer.status
        if placed.by_the_web_server(status):
            # The web server's own answer (a request it answers itself, a refusal of the request's framing HTTP
            # defines), in whatever form it gives it: judged for what misleads (judging/http_layer.py).
            return Route.WEB_SERVER
        valid_key = self._valid(request.headers.get("Authorization"))
        refused_first = placed.credential_first and not valid_key and status != 401
        if placed.silence is not None and not refused_first:
            return _outside(answer, request, placed, operation, valid_key)
        if not valid_key and status != 401:
            # Without the valid key a request must get 401 whatever else it carries (§5.3): its clause first.
            # The key carried elsewhere (the query, another header) is a credential in another form:
            # auth.invalid's, as the auth tests place it, even with no Authorization header.
            return Route.CREDENTIAL
        if valid_key and operation == "createPet" and status != 201 and self._plain_new_pet(request.body):
            return Route.PLAIN_CREATE
        if valid_key and operation == "createPet" and status == 201 and not new_pet(request.body):
            # Invalid data accepted: the create.reject.* clauses judge it; the animal it made is left out
            # of the shape checks here and in every later answer (one fault, one clause).
            return Route.ADMITTED
        return Route.DOCUMENTED

    def _note(self, judged: Judged, started: float) -> None:
        """What the pipeline keeps of an answer, beside its checks: the ids a create handed out, the refused
        creates (a refused create changes nothing, a web server's refusal included: judging/refusals.py)."""
        answer, route = judged.answer, judged.route
        if judged.operation == "createPet" and route is not Route.REDIRECT:
            self.refusals.create_answered(judged.request.body, answer.status, answer)
            if route is not Route.WEB_SERVER and expect.created(answer):
                self._handed(answer, started)  # a 201, or another 2xx with a Pet: an id handed out all the same
        if route is Route.ADMITTED:
            self._admitted(answer)
        if route is Route.PLAIN_CREATE and expect.created_animal(answer) is not None:
            # A plain create answered another 2xx with a Pet (its status create.created's finding): the animal
            # exists, and its name is one the refused creates are held against (one fault, one clause).
            self.refusals.animals_shown([answer.json()], answer)

    def _credential_clause(self, request: PreparedRequest, authorization: str | None) -> ClauseId:
        return (
            CLAUSE_IDS.auth_missing
            if authorization is None and not self._key_elsewhere(request)
            else CLAUSE_IDS.auth_invalid
        )

    def _handed(self, answer: Answer, started: float) -> None:
        """An id a create answered, whichever part of the run sent it: ``ids.handed_twice`` holds them all."""
        try:
            body = answer.json()
        except (ValueError, RecursionError):
            return
        if isinstance(body, dict) and type(pet_id := body.get("id")) is int:
            handed = Handed(pet_id, started, answer.exchange.to_dict())
            with self._lock:
                self.handed.append(handed)

    def _admitted(self, answer: Answer) -> None:
        try:
            body = answer.json()
        except (ValueError, RecursionError):
            return
        pet_id = body.get("id") if isinstance(body, dict) else None
        if isinstance(pet_id, int) and type(pet_id) is int:
            with self._lock:
                self.admitted.add(pet_id)

    def _key_elsewhere(self, request: PreparedRequest) -> bool:
        if not self.key:
            return False
        url = request.url or ""
        if any(self.key in form for form in (url, unquote(url), unquote_plus(url))):
            return True
        return any(self.key in str(value) for name, value in request.headers.items() if name.lower() != "authorization")

    def _valid(self, header: str | None) -> bool:
        scheme, _, token = (header or "").partition(" ")
        return scheme.lower() == "bearer" and token == self.key

    def _plain_new_pet(self, body: bytes | str | None) -> bool:
        """A NewPet no compliant service may refuse: the run's own short plain name, a small positive
        categoryId, a PetStatus or none, nothing else (a service may refuse long or unusual names, and
        categories that are large, zero, negative or not in its catalog: category rules are not shown)."""
        try:
            # A key given twice leaves the outcome to the parser (RFC 8259 §4): a service may refuse it.
            data = json.loads(body, object_pairs_hook=_unique_keys) if body else None
        except (ValueError, TypeError):
            return False
        if not isinstance(data, dict) or set(data) - {"name", "categoryId", "status"} or self.plain is None:
            return False
        name, category = data.get("name"), data.get("categoryId")
        if not isinstance(name, str) or len(name) > PLAIN_NAME or not self.plain.fullmatch(name) or "twin" in name:
            return False
        if type(category) is not int or not 0 < category <= PLAIN_CATEGORY:
            return False
        return "status" not in data or data["status"] in STATUSES

    def to_dict(self) -> JsonObject:
        """The process's tally; the refusals are judged against every answer in so far (the last tally, at
        the end of the process, holds them all)."""
        with self._lock:
            findings: list[JsonValue] = [finding.to_dict() for finding in [*self.findings, *self.refusals.findings()]]
            handed: list[JsonValue] = [create.to_dict() for create in self.handed]
            return {"judged": self.judged, "unanswered": self.unanswered, "findings": findings, "handed": handed}


def _unique_keys(pairs: list[tuple[str, JsonValue]]) -> JsonObject:
    if len({key for key, _ in pairs}) != len(pairs):
        raise ValueError("a key given twice")
    return dict(pairs)


def _location(answer: Answer) -> bool:
    return any(name.lower() == "location" and value for name, value in answer.fields)


def _described(seen: Observed) -> bool:
    """The request is one the document describes: one of its operations, at its path, within the document
    (``interface/silence.py``: no silence).  Its answer is the operation's, a redirect included."""
    request = seen.request
    method, url = request.method or "GET", request.url or ""
    if not operation_id(method, url):
        return False
    return classify(method, url, request.headers, request.body).silence is None


def _throttled(answer: Answer) -> bool:
    """An answer the transport waits on and asks again (``transport.throttling``: 429, or 503 with
    Retry-After, any method): the request was not handled (RFC 6585 §4, RFC 9110 §15.6.4)."""
    return throttling(answer.status, answer.headers.get("retry-after"))


def _finding(clause: ClauseId, mismatch: Mismatch) -> Finding:
    return Finding(
        clause, mismatch.expected, mismatch.observed, mismatch.exchange, TEST, expectation=mismatch.expectation
    )


def _passes(gates: bool, judged: Judged, found: list[Finding]) -> bool:
    """Runs the gates, or the other checks, that apply to the answer, in the order declared: their findings,
    and what the pipeline makes of what they read, into ``found``; False when one that halts failed."""
    for declared in DECLARED:
        if declared.gate is not gates or not declared.applies(judged):
            continue
        held = judged.holds(declared)
        mismatch = judged.outcomes[declared.kind]
        if mismatch is not None:
            found.append(_finding(clause_on(declared, judged), mismatch))
        if declared.then is not None:
            found += declared.then(judged, held)
        if not held and (declared.halts or declared.gate):
            return False
    return True


def _outside(answer: Answer, request: PreparedRequest, placed: Placed, operation: str, valid_key: bool) -> Route:
    """A request the document does not describe (``interface/silence.py``): HTTP decides its status, §7
    its error body.  A 2xx that serves it as the document's operation is judged as that operation's
    answer; a path that names no animal (a petId that is no int64) is read.not-found's to judge."""
    status = answer.status
    served = 200 <= status < 300
    if not valid_key and (served or not placed.fits(status)):
        # Served without the key (no animal, whatever the path or body), or refused with a status nothing
        # in HTTP fits (a 403, say): §5.3's 401 was due, and the credential's clause judges it.
        return Route.OUTSIDE_UNKEYED
    if served:
        return Route.DOCUMENTED if operation and placed.silence is not SILENCES["path"] else Route.OUTSIDE_QUIET
    if not placed.fits(status):
        return Route.OUTSIDE_UNFITTING
    if request.method == "HEAD":
        return Route.OUTSIDE_QUIET  # a HEAD answer carries no content (RFC 9110 §9.3.2): no Error body to judge
    return Route.OUTSIDE_REFUSED
