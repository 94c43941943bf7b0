"""Judgements shared by the targeted tests: each says what it expected and what came back.

A helper raises ``Mismatch`` (expected, observed, the exchange); the ``judge`` block around it
names the clause, so one exchange can be judged on several clauses, each on its own::

    with judge("auth.invalid"):
        expect.status(answer, 401)
    with judge("auth.challenge"):
        expect.bearer_challenge(answer)
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field

import pytest

from petstore_contract.core.records import (
    BUDGET,
    CONFORMS,
    NOT_APPLICABLE,
    NOT_SELECTED,
    TARGET,
    THROTTLED,
    UNDECIDED,
    VIOLATED,
    Exchange,
    Finding,
    Mismatch,
    Note,
    Outcome,
    Undecided,
    Violation,
)
from petstore_contract.interface.clauses import CLAUSE_IDS
from petstore_contract.interface.jsontypes import JsonLike, JsonObject, JsonValue
from petstore_contract.interface.spec import animal_made as animal_made
from petstore_contract.interface.spec import schema_errors
from petstore_contract.judging import headers
from petstore_contract.judging.declaration import Kind
from petstore_contract.transport import TargetProblem, throttling
from petstore_contract.transport.answers import Row
from petstore_contract.transport.problems import INCOMPLETE

SHOWN = 200  # characters of a value quoted in an observation


def throttled(exchange: Exchange | None) -> bool:
    """A 429 (or a 503 with Retry-After) that outlasted the waits the transport gave it: the target
    would not handle the request, which decides nothing (``transport.throttling``) — never a violation."""
    return exchange is not None and throttling(exchange.status, exchange.header("Retry-After"))


def short(value: object, limit: int = SHOWN) -> str:
    try:
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    except (ValueError, RecursionError):  # nested deeper than json can write back
        text = repr(value) if not isinstance(value, list | dict) else f"a JSON {type(value).__name__} nested too deep"
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} characters)"


def body_of(answer: Row) -> str:
    return short(answer.body.decode("utf-8", errors="replace")) or "an empty body"


def parse_json(answer: Row) -> JsonValue:
    """The body as JSON, a value of the caller's own (a test may change it); not JSON: the Mismatch."""
    try:
        parsed: JsonValue = json.loads(answer.body)
        return parsed
    except (ValueError, RecursionError):  # invalid JSON or UTF-8; nesting deeper than Python's stack
        raise _not_json(answer) from None


def parsed(answer: Row) -> JsonValue:
    """The answer's one parse of its body (``Answer.json``), shared by every reader and never changed;
    not JSON: the Mismatch."""
    try:
        return answer.json()
    except (ValueError, RecursionError):
        raise _not_json(answer) from None


def _not_json(answer: Row) -> Mismatch:
    return Mismatch("a JSON body", f"HTTP {answer.status} with {body_of(answer)}", answer.exchange, Kind.JSON_BODY)


def status(answer: Row, *expected: int) -> None:
    if answer.status not in expected:
        want = " or ".join(map(str, dict.fromkeys(expected)))  # each status once (a test may list one twice)
        observed = f"HTTP {answer.status} with {body_of(answer)}"
        raise Mismatch(f"HTTP {want}", observed, answer.exchange, Kind.STATUS.expectation(",".join(map(str, expected))))


def created_animal(answer: Row) -> JsonObject | None:
    """The animal a create's answer shows the store now holds, or None.

    A 201 whose body is a JSON object with an integer id (its shape is create.created's to judge); any
    other 2xx whose body is a Pet, id included: the document leaves no doubt that the animal exists, and
    the status is create.created's violation on its own clause, so set-up and every other clause go on
    with that animal (one fault, one clause).  A body is read whatever its Content-Type says
    (json.content-type judges that)."""
    return animal_made(answer.status, answer.body)


def created(answer: Row) -> bool:
    """A create answered 201 (whatever its body: create.created judges it), or another 2xx that shows the
    animal it made (``created_animal``)."""
    return answer.status == 201 or created_animal(answer) is not None


def made_nothing(judge: Judge, answer: Row, clause: str) -> bool:
    """True where a create's answer made no animal (``created``): it shows no fields, so ``clause``'s rule
    (an echo, an id) has nothing to judge on this exchange; its status is create.created's or
    responses.documented's to judge.  The clause is decided on the creates that made one, and stays
    undecided (not exercised) only where none of the run's did."""
    if created(answer):
        return False
    judge.nothing_to_judge(clause)
    return True


def key_accepted(answer: Row, expected: str = "the valid key accepted (§5.1)") -> None:
    """The credential sent was taken: no 401 and no 403 (what else it answered is other clauses' to judge)."""
    if answer.status in (401, 403):
        raise Mismatch(expected, f"HTTP {answer.status}", answer.exchange, Kind.KEY_ACCEPTED)


def no_server_error(answer: Row) -> None:
    if answer.status >= 500:
        observed = f"HTTP {answer.status} with {body_of(answer)}"
        raise Mismatch("no 5xx answer", observed, answer.exchange, Kind.NO_SERVER_ERROR)


def json_media_type(answer: Row) -> None:
    content_type = answer.headers.get("content-type", "")
    if headers.media_type(content_type) != "application/json":
        observed = f"Content-Type: {content_type or '(none)'}"
        raise Mismatch("Content-Type: application/json", observed, answer.exchange, Kind.JSON_MEDIA_TYPE)


def error_body(answer: Row) -> JsonObject:
    """An Error: a JSON object with string code, string message, integer status = the HTTP status."""
    body = parse_json(answer)
    problems = schema_errors("Error", body)
    if problems or not isinstance(body, dict):
        raise Mismatch(
            "an Error body {code: string, message: string, status: integer}",
            f"{body_of(answer)} ({'; '.join(problems)})",
            answer.exchange,
            Kind.ERROR_BODY,
        )
    if body["status"] != answer.status:
        raise Mismatch(
            f"Error status {answer.status} (the HTTP status)",
            f"Error status {body['status']!r}",
            answer.exchange,
            Kind.ERROR_BODY,
        )
    return body


def pet(instance: JsonValue, where: str, exchange: Exchange | None = None) -> JsonObject:
    problems = schema_errors("Pet", instance)
    if problems or not isinstance(instance, dict):
        raise Mismatch(f"{where} to be a Pet", f"{short(instance)} ({'; '.join(problems)})", exchange, Kind.PET)
    return instance


def pet_list(answer: Row, admitted: Collection[int] = ()) -> list[JsonObject]:
    """A 200 whose body is a JSON array of Pet.  An item with an ``admitted`` id (an animal made from
    invalid data the service accepted: its rejection clause judges it) is kept but not judged for its shape."""
    status(answer, 200)
    body = parse_json(answer)
    if not isinstance(body, list):
        observed = f"a JSON {type(body).__name__}: {body_of(answer)}"
        raise Mismatch("a JSON array of Pet", observed, answer.exchange, Kind.PET_LIST)
    for index, item in enumerate(body):
        if not (admitted and isinstance(item, dict) and item.get("id") in admitted):
            pet(item, f"item {index} of the list", answer.exchange)
    return [item for item in body if isinstance(item, dict)]  # each one, once judged a Pet (or admitted)


def same_fields(sent: Mapping[str, JsonLike], answer: JsonLike, where: str, exchange: Exchange | None = None) -> None:
    """Each field sent comes back exactly (type and value: 1 is not 1.0 nor "1")."""
    if not isinstance(answer, Mapping):
        raise Mismatch(f"{where} as a JSON object", short(answer), exchange)
    for name, value in sent.items():
        got = answer.get(name, "<absent>")
        if got != value or type(got) is not type(value):
            kind = Kind.SAME_FIELD.expectation(name)
            raise Mismatch(f"{where} with {name}={short(value)}", f"{name}={short(got)}", exchange, kind)


def challenge_problem(challenge: str | list[str] | None) -> tuple[str, str] | None:
    """RFC 9110 §11.6.1 and RFC 6750 §3: what a 401's WWW-Authenticate value(s) lack, as (expected,
    observed), or None: a Bearer challenge is there.  Shared by the targeted and the generated tests."""
    values = [challenge] if isinstance(challenge, str) else list(challenge or [])
    if not any(values):
        return "a WWW-Authenticate header on the 401", "no WWW-Authenticate header"
    if "bearer" not in headers.challenge_schemes(values):
        return "a Bearer challenge", f"WWW-Authenticate: {short(values[0])}"
    return None


def bearer_challenge(answer: Row) -> str:
    """RFC 9110 §11.6.1 and RFC 6750 §3: a 401 carries a WWW-Authenticate header with a Bearer challenge."""
    challenge: str | None = answer.headers.get("www-authenticate")
    problem = challenge_problem(challenge)
    if problem is not None:
        raise Mismatch(*problem, answer.exchange, Kind.BEARER_CHALLENGE)
    return challenge or ""


def deprecation_problem(value: str | None, date: str | None, now: float) -> tuple[str, str, str] | None:
    """§4.3, §9.3 and RFC 9745 §2.1: what the deprecated operation's Deprecation header breaks, as
    (expected, observed, kind), or None: an sf-date (@<unix seconds>) not in the future (a future date
    announces a deprecation to come; the operation is deprecated now).  Shared by the targeted and
    the generated tests."""
    if value is None:
        return "a Deprecation header on the 200 answer", "no Deprecation header", Kind.DEPRECATION_HEADER
    seconds = headers.sf_date_seconds(value)
    if seconds is None:
        return "Deprecation: @<unix seconds> (RFC 9745 §2.1)", f"Deprecation: {short(value)}", Kind.DEPRECATION_HEADER
    if headers.after_now(seconds, date, now):
        expected = "a Deprecation date not in the future: the operation is deprecated (§4.3)"
        return expected, f"Deprecation: {short(value)}", Kind.DEPRECATION_FUTURE
    return None


def not_deprecated(answer: Row) -> None:
    """§9.3: only GET /pets/{petId} is deprecated; an answer of a current operation announces neither a
    deprecation (RFC 9745) nor a removal (RFC 8594)."""
    for name in ("Deprecation", "Sunset"):
        value = answer.headers.get(name)
        if value is not None:
            expected = "no Deprecation or Sunset header on a current operation"
            raise Mismatch(expected, f"{name}: {value}", answer.exchange, Kind.DEPRECATION_SCOPE)


# -- the judge: one outcome per clause of a test ----------------------------------------------------


@dataclass
class Judge:
    """What a test decided, clause by clause; the plugin reads it after the test."""

    outcomes: dict[str, Outcome] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    examined: dict[str, int] = field(default_factory=dict)  # clause -> judgements made (exchanges judged)
    # Every exchange the test sent was judged before its violations were raised (a generated test's cases,
    # sent side by side and judged together): a violation did not end it before its other clauses.
    whole: bool = False
    # The test's body ran to its end and its violations were raised after it (``finish``): a clause it
    # names and never judged had nothing to judge on its exchanges, as in a test that passed.
    finished: bool = False

    @contextmanager
    def __call__(self, clause: str) -> Iterator[None]:
        """Judge one clause: a Mismatch inside violates it, Undecided (or an unanswered request) leaves
        it undecided, else it conforms.

        A block that ends without Undecided examined the target for its clause once; a clause no block
        examined cannot conform (``verdict.clause_results``)."""
        try:
            yield
        except Mismatch as exc:
            if exc.exchange is not None and throttled(exc.exchange):
                kept = f"the target kept answering {exc.exchange.status} ({exc.exchange.url})"
                self.undecided(Note((clause,), THROTTLED, kept))
            else:
                self.violated(exc.finding(clause))
        except Violation as exc:
            for finding in exc.findings:
                self.violated(finding)
        except Undecided as exc:
            self.undecided(exc.note)
        except TargetProblem as exc:  # one row of a table unanswered: that row alone is undecided
            self.unanswered(clause, exc)
        else:
            if self.outcomes.get(clause, NOT_SELECTED) == NOT_SELECTED:  # judged here after all: it conforms
                self.outcomes[clause] = CONFORMS
            self.count(clause)

    def error_body(self, answer: Row) -> None:
        """§7 "All error responses use the Error body": an error answer (4xx, 5xx) is judged on errors.body;
        a 2xx or 3xx carries none, so this exchange has nothing to judge for it (``nothing_to_judge``: the
        clause is decided on the answers that have one, and a violation of another clause does not leave it
        undecided)."""
        if answer.status >= 400:
            with self(CLAUSE_IDS.errors_body):
                error_body(answer)
        else:
            self.nothing_to_judge(CLAUSE_IDS.errors_body)

    def count(self, clause: str, exchanges: int = 1) -> None:
        """``exchanges`` more judgements of ``clause`` (a check that judges outside a ``with judge`` block)."""
        if exchanges > 0:
            self.examined[clause] = self.examined.get(clause, 0) + exchanges

    def not_applicable(self, clause: str, reason: str) -> None:
        """``clause`` conforms because its rule applies only to what the target chose to send, and it sent
        none of it (``records.NOT_APPLICABLE``): judged on the exchange that shows so, with the reason."""
        self.outcomes.setdefault(clause, CONFORMS)
        self.count(clause)
        self.notes.append(Note((clause,), NOT_APPLICABLE, reason))

    def nothing_to_judge(self, clause: str) -> None:
        """This test's exchange is none ``clause``'s rule applies to (a challenge's parameters where the 401
        carries no Bearer challenge): the clause is left to the tests that have one, and a violation this
        test finds on another clause does not leave it undecided (``classify``)."""
        self.outcomes.setdefault(clause, NOT_SELECTED)

    def violated(self, finding: Finding) -> None:
        self.findings.append(finding)
        self.outcomes[finding.clause] = VIOLATED
        self.count(finding.clause)

    def undecided(self, note: Note) -> None:
        self.notes.append(note)
        for clause in note.clauses:
            if self.outcomes.get(clause) != VIOLATED:
                self.outcomes[clause] = UNDECIDED

    def unanswered(self, clause: str, problem: TargetProblem) -> None:
        """A request for ``clause`` the target did not answer: undecided, whatever its other rows decide;
        one whose answer started and never completed: violated (``cut_short``)."""
        cut = cut_short(problem)
        if cut is not None:
            self.violated(cut.finding(clause))
            return
        kind = BUDGET if problem.kind == BUDGET else TARGET
        self.undecided(Note((clause,), kind, f"the target could not be asked: {problem}"))

    def finish(self) -> None:
        """Raise the test's violations (all of them, each on its clause) once every clause was judged."""
        self.finished = True
        if self.findings:
            raise Violation(*self.findings)


# RFC 9112 §6.3 (a message ends where its framing says) and §9.6 (a server that closes without reading a
# body does so in a way that lets the client read its answer): what an answer that started owes the client.
WHOLE = "the whole answer (RFC 9112 §6.3: it ends where its framing says; §9.6: a refusal of an unread body too)"


def cut_short(problem: TargetProblem) -> Mismatch | None:
    """The finding of an answer that started (its status arrived) and never completed: the target answered,
    not the network (a reset is never one of these: ``transport.adapter``); None for any other problem."""
    if problem.kind != INCOMPLETE:
        return None
    status = problem.exchange.status if problem.exchange is not None else None
    why = problem.message.split(": ", 1)[-1]
    return Mismatch(WHOLE, f"HTTP {status} that never completed: {why}", problem.exchange)


JUDGE_KEY = pytest.StashKey[Judge]()
# A seam for another plugin (the self-tests' ``selftests/plugins/unjudged.py``): what makes each test's
# Judge, put in ``config.stash`` at configure time; a subclass may judge differently.  Unset: ``Judge``.
JUDGE_FACTORY = pytest.StashKey[Callable[[], Judge]]()


def judge_of(item: pytest.Item) -> Judge:
    """The test's judge (made on first use): its clause outcomes, findings and judgements made."""
    judge = item.stash.get(JUDGE_KEY, None)
    if judge is None:
        judge = item.stash[JUDGE_KEY] = item.config.stash.get(JUDGE_FACTORY, Judge)()
    return judge
