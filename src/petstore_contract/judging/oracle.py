"""One judging pipeline: every exchange of the run passes the checks that apply to its operation and status.

Whichever part of the run sent a request (the pre-flight request, set-up, the tables sent ahead, a
targeted test, a generated case, a stateful step, a re-ask), its answer passes the transport's
watchers (``GuardedAdapter.watchers``); the ``Oracle`` is one of them, in every process, as
Schemathesis applies its ``@check`` functions to every response.  It judges, from the OpenAPI
document (``interface/spec.py``) and the check registry (``checks.py``), what holds for any answer whoever
asked:

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

import contextlib
import json
import re
import threading
from collections import Counter
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote, unquote_plus, urlsplit

from petstore_contract.core.kinds import Kind
from petstore_contract.core.records import Finding, Mismatch
from petstore_contract.core.redaction import Redactor
from petstore_contract.interface.clauses import CLAUSE_IDS, success_clause
from petstore_contract.interface.document import CURRENT_OPERATIONS, INT64_MAX, INT64_MIN, STATUSES
from petstore_contract.interface.silence import SILENCES, Placed, classify
from petstore_contract.interface.spec import answer_schema, documented, operation_id
from petstore_contract.judging import expect
from petstore_contract.judging.checks import clause_of
from petstore_contract.judging.coverage import new_pet
from petstore_contract.judging.model import StoreModel
from petstore_contract.judging.refusals import Refusals
from petstore_contract.judging.seen import SeenAnswer
from petstore_contract.transport import REDIRECTS, Observed
from petstore_contract.transport.answers import throttling

TEST = "(every exchange of the run): the checks that apply to every answer"
KEPT_PER_CHECK = 3  # findings kept per process for one clause and kind: evidence, not a log
PLAIN_NAME = 40  # name rules are not shown (§2); a service may refuse long names, never short plain ones
# The suite's ordinary animals use categories 1 to about 110.  Category values are not shown (§2): a
# service may keep a catalog and refuse zero, negative or large ones (the value edges); none refuses these.
PLAIN_CATEGORY = 1000


class Oracle:
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
        self.handed: list[dict[str, Any]] = []  # every 201 of POST /pets: its id, when, its exchange (``ids``)
        self._kept: Counter[tuple[str, str]] = Counter()

    def __call__(self, seen: Observed) -> None:
        # A redirect of a request the document does not describe (a trailing slash, another case) is HTTP's
        # plumbing: the transport follows it within the target's origin (and the answer it leads to is
        # judged) or refuses to (the request is then unanswered: the key stays with the target).  A redirect
        # of a request the document describes is that operation's answer, and no 3xx is in its table.
        # An answer that never completed (``problem`` beside its status) is judged once, on the clause of the
        # request that got it (``expect.cut_short``): its body is not all there to be judged here.
        redirected = seen.status in REDIRECTS and _location(seen)
        if seen.status is None or seen.problem or (redirected and not _described(seen)):
            with self._lock:
                self.unanswered += 1
            return
        answer = SeenAnswer(seen, self.redact)
        found = self.redirect(answer) if redirected else [] if _throttled(answer) else self.judge(answer)
        with self._lock:
            self.judged += 1
            for finding in found:
                key = (finding.clause, finding.expectation.partition(":")[0])
                self._kept[key] += 1
                if self._kept[key] <= KEPT_PER_CHECK:
                    self.findings.append(finding)

    def judge(self, answer: SeenAnswer) -> list[Finding]:
        """Every universal check of one answer, each on its clause (a failed check never stops the others)."""
        request = answer.seen.request
        operation = operation_id(request.method or "GET", request.url or "")
        found: list[Finding] = []
        check = _checker(found, operation, answer.status)
        # Where the request stands (interface/silence.py): outside the document, HTTP decides its status;
        # a refused credential still gets its 401 first where the service itself reads the request.
        placed = classify(request.method or "GET", request.url or "", request.headers, request.body)
        if placed.by_the_web_server(answer.status):
            # The web server's own answer (a request it answers itself, a refusal of the request's framing HTTP
            # defines), in whatever form it gives it: judged for what misleads (judging/http_layer.py).  A refused
            # create still changes nothing (judging/refusals.py).
            if operation == "createPet":
                self.refusals.create_answered(request.body, answer.status, answer)
            return found
        if not placed.fits(answer.status) and not check(Kind.NO_SERVER_ERROR, lambda: expect.no_server_error(answer)):
            return found
        if operation == "createPet":
            self.refusals.create_answered(request.body, answer.status, answer)
            if expect.created(answer):  # a 201, or another 2xx with a Pet: an id handed out all the same
                self._handed(answer)
        authorization = request.headers.get("Authorization")
        valid_key = self._valid(authorization)
        refused_first = placed.credential_first and not valid_key and answer.status != 401
        if placed.silence is not None and not refused_first:
            return self._outside(answer, placed, operation, valid_key, check, found)
        if not valid_key and answer.status != 401:
            # Without the valid key a request must get 401 whatever else it carries (§5.3): its clause first.
            # The key carried elsewhere (the query, another header) is a credential in another form:
            # auth.invalid's, as the auth tests place it, even with no Authorization header.
            try:
                expect.status(answer, 401)
            except Mismatch as mismatch:
                found.append(_finding(self._credential_clause(request, authorization), mismatch))
            return found
        if valid_key and operation == "createPet" and answer.status != 201 and self._plain_new_pet(request.body):
            check(Kind.STATUS, lambda: expect.status(answer, 201), success_clause(operation))
            if expect.created_animal(answer) is not None:
                self._created_otherwise(answer, operation, check, found)
            return found
        if valid_key and operation == "createPet" and answer.status == 201 and not new_pet(request.body):
            # Invalid data accepted: the create.reject.* clauses judge it; the animal it made is left out
            # of the shape checks here and in every later answer (one fault, one clause).
            self._admitted(answer)
            return found
        self._as_documented(answer, operation, check, found)
        return found

    def _created_otherwise(self, answer: SeenAnswer, operation: str, check: Checker, found: list[Finding]) -> None:
        """A plain create answered another 2xx with a Pet (its status create.created's finding): the animal
        exists, so the rest of the answer is judged as a 201's would be (the media type, the current
        operation's headers), and its name is one the refused creates are held against (one fault, one
        clause)."""
        check(Kind.JSON_MEDIA_TYPE, lambda: expect.json_media_type(answer))
        self.refusals.animals_shown([answer.json()], answer)
        check(Kind.DEPRECATION_SCOPE, lambda: expect.not_deprecated(answer))

    def redirect(self, answer: SeenAnswer) -> list[Finding]:
        """A 3xx to a request the document describes (its method and path, with or without the key): §4's
        Responses tables list none; a client that does not follow redirects gets no Pet and no 401."""
        request = answer.seen.request
        operation = operation_id(request.method or "GET", request.url or "")
        found: list[Finding] = []
        check = _checker(found, operation, answer.status)
        check(Kind.DOCUMENTED_STATUS, lambda: _documented(answer, operation), CLAUSE_IDS.responses_documented)
        return found

    def _as_documented(self, answer: SeenAnswer, operation: str, check: Checker, found: list[Finding]) -> None:
        """The answer of one of the document's operations: a status it lists, the body it gives that status."""
        request, status = answer.seen.request, answer.status
        if not check(Kind.DOCUMENTED_STATUS, lambda: _documented(answer, operation)):
            return
        if answer.body and request.method != "HEAD":
            check(Kind.JSON_MEDIA_TYPE, lambda: expect.json_media_type(answer))
        schema = answer_schema(operation, status)
        pets: list[Any] = []  # what the shape check read, judged by the model without reading it again
        if schema == "Pet":
            if self._invalid_admitted(answer):
                return
            if check(Kind.PET_BODY, lambda: pets.append(self._pet(answer))):
                found += self.model.judge(operation, pets, answer)
                self.refusals.animals_shown(pets, answer)
        elif schema == "Pet[]":
            if check(Kind.PET_LIST, lambda: pets.extend(self._pet_list(answer))):
                found += self.model.judge(operation, pets, answer)
            # A refused create's animal shows whatever its shape (kept with the status it was refused for, say).
            self.refusals.animals_shown(pets or _items(answer), answer)
        elif schema == "Error":
            check(Kind.ERROR_BODY, lambda: expect.error_body(answer))
            if operation == "getPet" and status == 404 and (pet_id := _pet_id(request.url or "")) is not None:
                found += self.model.gone(pet_id, answer)
        if operation in CURRENT_OPERATIONS:
            check(Kind.DEPRECATION_SCOPE, lambda: expect.not_deprecated(answer))
        if status == 401:
            check(Kind.BEARER_CHALLENGE, lambda: expect.bearer_challenge(answer))

    def _outside(
        self, answer: SeenAnswer, placed: Placed, operation: str, valid_key: bool, check: Checker, found: list[Finding]
    ) -> list[Finding]:
        """A request the document does not describe (``interface/silence.py``): HTTP decides its status, §7
        its error body.  A 2xx that serves it as the document's operation is judged as that operation's
        answer; a path that names no animal (a petId that is no int64) is read.not-found's to judge."""
        status = answer.status
        served = 200 <= status < 300
        if not valid_key and (served or not placed.fits(status)):
            # Served without the key (no animal, whatever the path or body), or refused with a status nothing
            # in HTTP fits (a 403, say): §5.3's 401 was due, and the credential's clause judges it.
            request = answer.seen.request
            clause = self._credential_clause(request, request.headers.get("Authorization"))
            check(Kind.STATUS, lambda: expect.status(answer, 401), clause)
            return found
        if served:
            if operation and placed.silence is not SILENCES["path"]:
                self._as_documented(answer, operation, check, found)
            return found
        if not placed.fits(status):
            check(Kind.STATUS, lambda: _fitting(answer, placed), CLAUSE_IDS.responses_documented)
            return found
        if answer.seen.request.method == "HEAD":
            return found  # a HEAD answer carries no content (RFC 9110 §9.3.2): no Error body to judge
        if check(Kind.ERROR_BODY, lambda: expect.error_body(answer), CLAUSE_IDS.errors_body):
            check(Kind.JSON_MEDIA_TYPE, lambda: expect.json_media_type(answer), CLAUSE_IDS.json_content_type)
        if status == 401:
            check(Kind.BEARER_CHALLENGE, lambda: expect.bearer_challenge(answer), CLAUSE_IDS.auth_challenge)
        return found

    def _credential_clause(self, request: Any, authorization: str | None) -> str:
        return (
            CLAUSE_IDS.auth_missing
            if authorization is None and not self._key_elsewhere(request)
            else CLAUSE_IDS.auth_invalid
        )

    def _handed(self, answer: SeenAnswer) -> None:
        """An id a create answered, whichever part of the run sent it: ``ids.handed_twice`` holds them all."""
        try:
            body = answer.seen.json()
        except (ValueError, RecursionError):
            return
        if isinstance(body, dict) and type(body.get("id")) is int:
            handed = {"id": body["id"], "at": answer.seen.started, "exchange": answer.exchange.to_dict()}
            with self._lock:
                self.handed.append(handed)

    def _admitted(self, answer: SeenAnswer) -> None:
        try:
            body = answer.json()
        except Mismatch:
            return
        if isinstance(body, dict) and type(body.get("id")) is int:
            with self._lock:
                self.admitted.add(body["id"])

    def _invalid_admitted(self, answer: SeenAnswer) -> bool:
        """A read of an animal made from invalid data the service accepted (its clause already judges it)."""
        pet_id = _pet_id(answer.seen.request.url or "")
        return pet_id is not None and pet_id in self.admitted

    def _pet(self, answer: SeenAnswer) -> Any:
        return _evidenced(answer, expect.pet, answer.json(), "the body")

    def _pet_list(self, answer: SeenAnswer) -> list[Any]:
        """The list's Pets (an array of Pet), but those made from invalid data the service accepted."""
        expect.status(answer, 200)
        body = answer.json()
        if not isinstance(body, list):
            raise Mismatch("a JSON array of Pet", f"a JSON {type(body).__name__}", answer.exchange, Kind.PET_LIST)
        kept = [item for item in body if not (isinstance(item, dict) and item.get("id") in self.admitted)]
        for index, item in enumerate(kept):
            _evidenced(answer, expect.pet, item, f"item {index} of the list")
        return kept

    def _key_elsewhere(self, request: Any) -> bool:
        if not self.key:
            return False
        url = request.url or ""
        if any(self.key in form for form in (url, unquote(url), unquote_plus(url))):
            return True
        return any(self.key in str(value) for name, value in request.headers.items() if name.lower() != "authorization")

    def _valid(self, header: str | None) -> bool:
        scheme, _, token = (header or "").partition(" ")
        return scheme.lower() == "bearer" and token == self.key

    def _plain_new_pet(self, body: Any) -> bool:
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

    def to_dict(self) -> dict[str, Any]:
        """The process's tally; the refusals are judged against every answer in so far (the last tally, at
        the end of the process, holds them all)."""
        with self._lock:
            findings = [finding.to_dict() for finding in [*self.findings, *self.refusals.findings()]]
            return {"judged": self.judged, "unanswered": self.unanswered, "findings": findings, "handed": self.handed}


def _evidenced(answer: SeenAnswer, check: Callable[..., Any], *args: Any) -> Any:
    """``check(*args)``, its Mismatch given the exchange as evidence: the redacted exchange (which scans
    the whole body, a page can be megabytes) is built for a finding only, not for every answer."""
    try:
        return check(*args)
    except Mismatch as mismatch:
        mismatch.exchange = answer.exchange
        raise


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    if len({key for key, _ in pairs}) != len(pairs):
        raise ValueError("a key given twice")
    return dict(pairs)


def _location(seen: Observed) -> bool:
    return any(name.lower() == "location" and value for name, value in seen.headers)


def _items(answer: SeenAnswer) -> list[Any]:
    with contextlib.suppress(Mismatch):
        return body if isinstance(body := answer.json(), list) else []
    return []


def _described(seen: Observed) -> bool:
    """The request is one the document describes: one of its operations, at its path, within the document
    (``interface/silence.py``: no silence).  Its answer is the operation's, a redirect included."""
    request = seen.request
    method, url = request.method or "GET", request.url or ""
    if not operation_id(method, url):
        return False
    return classify(method, url, request.headers, request.body).silence is None


def _throttled(answer: SeenAnswer) -> bool:
    """An answer the transport waits on and asks again (``transport.throttling``: 429, or 503 with
    Retry-After, any method): the request was not handled (RFC 6585 §4, RFC 9110 §15.6.4)."""
    return throttling(answer.status, answer.headers.get("retry-after"))


def _pet_id(url: str) -> int | None:
    """The int64 petId a read asked for, None for a path segment that is no int64."""
    segment = unquote(urlsplit(url).path.rstrip("/").rsplit("/", 1)[-1])
    pet_id = int(segment) if re.fullmatch(r"-?[0-9]{1,19}", segment) else None
    return pet_id if pet_id is not None and INT64_MIN <= pet_id <= INT64_MAX else None


def _documented(answer: SeenAnswer, operation: str) -> None:
    if not documented(operation, answer.status):
        observed = f"HTTP {answer.status} with {expect.body_of(answer)}"
        expected = f"a status the document lists for {operation}"
        raise Mismatch(expected, observed, answer.exchange, Kind.DOCUMENTED_STATUS)


# Runs one check of an answer; a Mismatch becomes a finding on the clause given, else where the check
# registry places its kind (``checks.clause_of``).  True when the check held.
Checker = Callable[..., bool]


def _checker(found: list[Finding], operation: str, status: int) -> Checker:
    def check(kind: Kind, run: Callable[[], Any], clause: str | None = None) -> bool:
        try:
            run()
        except Mismatch as mismatch:
            clause = clause or clause_of(kind, operation, status) or CLAUSE_IDS.responses_documented
            found.append(_finding(clause, mismatch))
            return False
        return True

    return check


def _fitting(answer: SeenAnswer, placed: Placed) -> None:
    """An answer with the valid key to a request outside the document: a status HTTP gives for it (RFC 9110
    §15.5, RFC 6585)."""
    assert placed.silence is not None
    statuses, refusals = placed.silence.statuses, placed.silence.framing_refusals
    wanted = [f"{', '.join(map(str, statuses))} with an Error body"] if statuses else []
    wanted += [f"{', '.join(map(str, refusals))} (the web server's refusal of the framing)"] if refusals else []
    expected = f"an answer HTTP gives to {placed.why}: a 2xx as the document says, or {' or '.join(wanted)}"
    observed = f"HTTP {answer.status} with {expect.body_of(answer)}"
    fitting = ",".join(map(str, (*statuses, *refusals)))
    raise Mismatch(expected, observed, answer.exchange, Kind.STATUS.expectation(fitting))


def _finding(clause: str, mismatch: Mismatch) -> Finding:
    return Finding(
        clause, mismatch.expected, mismatch.observed, mismatch.exchange, TEST, expectation=mismatch.expectation
    )
