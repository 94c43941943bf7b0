"""Every kind of check a finding records, each declared once, beside its function.

A declaration (``declaration.Declared``) says the clause a finding of it goes on, the answers the
pipeline of every exchange (``pipeline.py``) runs it on, in the order written here, and how a finding
of it is judged again at the end of a run (``reask.py``, ``petstore-contract replay``): its check made
from the argument the finding recorded (``status:401`` -> 401), or why there is none in one line (a
kind that needs more than one answer, or the generated case).

Clause placement is derived from the two sources of the interface: ``clauses.toml`` names the clause
of each operation's success (``operation = "createPet"``), and ``spec/openapi.yaml`` says which
statuses each operation documents and whether its success answer has a shape at all.

A check of a new kind is its declaration here: ``@declare("<kind>", ...)`` above its function, which
raises its Mismatch with that string (``DOCUMENTED_STATUS``); ``declaration.Kind`` names only the kinds
the expectations below this module raise.
"""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit

from petstore_contract.core.records import Finding, Mismatch
from petstore_contract.interface.clauses import CLAUSE_IDS, ClauseId, success_clause
from petstore_contract.interface.document import CURRENT_OPERATIONS, INT64_MAX, INT64_MIN
from petstore_contract.interface.jsontypes import JsonObject, JsonValue
from petstore_contract.interface.spec import documented, success_shown
from petstore_contract.judging import expect
from petstore_contract.judging.declaration import DECLARED, Declared, Judged, Kind, Placement, declare, declared
from petstore_contract.judging.declaration import Check as Check
from petstore_contract.judging.declaration import Route as R
from petstore_contract.transport.answers import Answer

SUCCESS, DOCUMENTED = Placement.SUCCESS, Placement.DOCUMENTED
ANSWERED = frozenset(R) - {R.WEB_SERVER, R.REDIRECT}  # every answer whose request the service reads
UNKEYED = frozenset({R.CREDENTIAL, R.OUTSIDE_UNKEYED})


class CannotRejudge(Exception):
    """One line: why this finding's check cannot be judged again from one answer."""


@declare(
    Kind.NO_SERVER_ERROR,
    clause=DOCUMENTED,
    again=lambda _: expect.no_server_error,
    on=ANSWERED,
    when=lambda judged: not judged.placed.fits(judged.status),  # a status HTTP fits for the request, or no 5xx
    gate=True,
    expected="no 5xx (§4 lists none)",
)
def _no_server_error(judged: Judged) -> None:
    expect.no_server_error(judged.answer)


def _statuses(argument: str) -> Check:
    wanted = tuple(int(code) for code in argument.split(","))
    return lambda answer: expect.status(answer, *wanted)


def _status_clause(judged: Judged) -> ClauseId:
    if judged.route in UNKEYED:
        return judged.credential
    if judged.route is R.PLAIN_CREATE:
        return success_clause(judged.operation) or CLAUSE_IDS.responses_documented
    return CLAUSE_IDS.responses_documented


@declare(
    Kind.STATUS,
    again=_statuses,
    on=UNKEYED | {R.PLAIN_CREATE, R.OUTSIDE_UNFITTING},
    place=_status_clause,
    expected="the status the document (or HTTP, outside it) gives the request",
)
def _status(judged: Judged) -> None:
    if judged.route in UNKEYED:
        expect.status(judged.answer, 401)  # §5.3, whatever else the request carries
    elif judged.route is R.PLAIN_CREATE:
        expect.status(judged.answer, 201)  # nothing a compliant service may refuse
    else:
        _fitting(judged)


def _fitting(judged: Judged) -> None:
    """An answer with the valid key to a request outside the document: a status HTTP gives for it (RFC 9110
    §15.5, RFC 6585)."""
    answer, placed = judged.answer, judged.placed
    assert placed.silence is not None
    statuses, refusals = placed.silence.statuses, placed.silence.framing_refusals
    wanted = [f"{', '.join(map(str, statuses))} with an Error body"] if statuses else []
    wanted += [f"{', '.join(map(str, refusals))} (the web server's refusal of the framing)"] if refusals else []
    expected = f"an answer HTTP gives to {placed.why}: a 2xx as the document says, or {' or '.join(wanted)}"
    observed = f"HTTP {answer.status} with {expect.body_of(answer)}"
    fitting = ",".join(map(str, (*statuses, *refusals)))
    raise Mismatch(expected, observed, answer.exchange, Kind.STATUS.expectation(fitting))


DOCUMENTED_STATUS = "documented-status"  # a status the OpenAPI document lists for the operation


def _documented_clause(judged: Judged) -> ClauseId:
    """A redirect is no answer of the operation's success: the document's Responses tables judge it."""
    if judged.route is R.REDIRECT:
        return CLAUSE_IDS.responses_documented
    return clause_of(DOCUMENTED_STATUS, judged.operation, judged.status) or CLAUSE_IDS.responses_documented


@declare(
    DOCUMENTED_STATUS,
    clause=DOCUMENTED,
    not_again="which statuses are documented depends on the operation, which the finding's request names",
    on=frozenset({R.DOCUMENTED, R.REDIRECT}),
    place=_documented_clause,
    halts=True,
    expected="a status the document lists for the operation",
)
def _documented(judged: Judged) -> None:
    answer, operation = judged.answer, judged.operation
    if not documented(operation, answer.status):
        observed = f"HTTP {answer.status} with {expect.body_of(answer)}"
        expected = f"a status the document lists for {operation}"
        raise Mismatch(expected, observed, answer.exchange, DOCUMENTED_STATUS)


def _media_type_applies(judged: Judged) -> bool:
    if judged.route is R.OUTSIDE_REFUSED:
        return judged.holds(REGISTRY[Kind.ERROR_BODY])  # an Error body is JSON, and says so
    if judged.route is R.PLAIN_CREATE:
        return expect.created_animal(judged.answer) is not None
    return bool(judged.answer.body) and judged.request.method != "HEAD"


@declare(
    Kind.JSON_MEDIA_TYPE,
    clause=CLAUSE_IDS.json_content_type,
    again=lambda _: expect.json_media_type,
    on=frozenset({R.DOCUMENTED, R.OUTSIDE_REFUSED, R.PLAIN_CREATE}),
    when=_media_type_applies,
    expected="Content-Type: application/json on an answer with a JSON body (§1)",
)
def _json_media_type(judged: Judged) -> None:
    expect.json_media_type(judged.answer)


def _pets_shown(judged: Judged, held: bool) -> list[Finding]:
    found = judged.model.judge(judged.operation, judged.read, judged.answer) if held else []
    if held or judged.schema == "Pet[]":  # a refused create's animal shows whatever the list's shape
        judged.refusals.animals_shown(judged.read or _items(judged.answer), judged.answer)
    return found


@declare(
    "pet-body",  # the whole body is one Pet
    clause=SUCCESS,
    again=lambda _: _pet_body,
    on=frozenset({R.DOCUMENTED}),
    # A read of an animal made from invalid data the service accepted: its rejection clause judges it.
    when=lambda judged: judged.schema == "Pet" and _pet_id(judged.request.url or "") not in judged.admitted,
    then=_pets_shown,
    expected="a Pet (§2)",
)
def _pet(judged: Judged) -> None:
    judged.read.append(_evidenced_pet(judged.answer, expect.parsed(judged.answer), "the body"))


def _pet_body(answer: Answer) -> None:
    expect.pet(expect.parse_json(answer), "the body", answer.exchange)


@declare(
    Kind.PET_LIST,
    clause=SUCCESS,
    again=lambda _: expect.pet_list,
    on=frozenset({R.DOCUMENTED}),
    when=lambda judged: judged.schema == "Pet[]",
    then=_pets_shown,
    expected="a JSON array of Pet (§2, §4.1)",
)
def _pet_list(judged: Judged) -> None:
    """The list's Pets (an array of Pet), but those made from invalid data the service accepted."""
    answer = judged.answer
    expect.status(answer, 200)
    body = expect.parsed(answer)
    if not isinstance(body, list):
        raise Mismatch("a JSON array of Pet", f"a JSON {type(body).__name__}", answer.exchange, Kind.PET_LIST)
    kept = [item for item in body if not (isinstance(item, dict) and item.get("id") in judged.admitted)]
    for index, item in enumerate(kept):
        _evidenced_pet(answer, item, f"item {index} of the list")
    judged.read.extend(kept)


def _gone(judged: Judged, held: bool) -> list[Finding]:
    """A 404 to a read: the store model's, whatever the Error body (an animal it saw is gone)."""
    request = judged.request
    if judged.route is not R.DOCUMENTED or judged.operation != "getPet" or judged.status != 404:
        return []
    pet_id = _pet_id(request.url or "")
    return judged.model.gone(pet_id, judged.answer) if pet_id is not None else []


@declare(
    Kind.ERROR_BODY,
    clause=CLAUSE_IDS.errors_body,
    again=lambda _: expect.error_body,
    on=frozenset({R.DOCUMENTED, R.OUTSIDE_REFUSED}),
    when=lambda judged: judged.route is R.OUTSIDE_REFUSED or judged.schema == "Error",
    then=_gone,
    expected="an Error body: string code and message, status equal to the HTTP status (§7)",
)
def _error_body(judged: Judged) -> None:
    expect.error_body(judged.answer)


@declare(
    Kind.DEPRECATION_SCOPE,
    clause=CLAUSE_IDS.deprecation_scope,
    again=lambda _: expect.not_deprecated,
    on=frozenset({R.DOCUMENTED, R.PLAIN_CREATE}),
    when=lambda judged: (
        judged.operation in CURRENT_OPERATIONS
        if judged.route is R.DOCUMENTED
        else expect.created_animal(judged.answer) is not None
    ),
    expected="no Deprecation or Sunset header on the current operations (§9.3)",
)
def _not_deprecated(judged: Judged) -> None:
    expect.not_deprecated(judged.answer)


@declare(
    Kind.BEARER_CHALLENGE,
    clause=CLAUSE_IDS.auth_challenge,
    again=lambda _: _challenge_of_401,
    on=frozenset({R.DOCUMENTED, R.OUTSIDE_REFUSED}),
    when=lambda judged: judged.status == 401,
    expected="a WWW-Authenticate header with a Bearer challenge on a 401 (§5.3)",
)
def _bearer_challenge(judged: Judged) -> None:
    expect.bearer_challenge(judged.answer)


def _challenge_of_401(answer: Answer) -> None:
    """RFC 9110 §11.6.1 asks a challenge of a 401; an answer that is no 401 does not decide it."""
    if answer.status != 401:
        raise CannotRejudge(f"the answer is now HTTP {answer.status}, not a 401: its challenge is not asked for")
    expect.bearer_challenge(answer)


# The kinds only a test or Schemathesis checks: what they need beyond one answer, in one line each.
declared(Kind.KEY_ACCEPTED, clause=CLAUSE_IDS.auth_accepted, again=lambda _: expect.key_accepted)
declared(Kind.JSON_BODY, again=lambda _: expect.parse_json)
declared(Kind.PET, not_again="it judges one animal inside a larger answer that the check chose")
declared(Kind.SAME_FIELD, not_again="it compares a field with what the suite created or sent before")
declared(
    Kind.SAME_ANIMAL,
    clause=CLAUSE_IDS.list_item_same,
    not_again="it compares an animal with the same id as another answer showed it",
)
declared(
    Kind.DEPRECATION_HEADER, not_again="the generated test's check needs the operation's deprecation in the schema"
)
declared(Kind.DEPRECATION_FUTURE, not_again="whether a date is in the future depends on when the answer was given")
declared(
    Kind.SCHEMATHESIS,
    not_again="Schemathesis' checks judge an answer against the generated case and the operation's schema",
)
declared(Kind.OWN, not_again="its check records no kind that could be run again (a check written in the test itself)")

REGISTRY: dict[str, Declared] = {entry.kind: entry for entry in DECLARED}
# Every kind a finding can record is declared once: a kind declared twice, or a member of Kind without a
# declaration, fails at import.
if len(REGISTRY) != len(DECLARED) or not set(Kind) <= set(REGISTRY):  # pragma: no cover - a development error
    raise RuntimeError(f"kinds declared other than once: {sorted(set(Kind) - set(REGISTRY))} of {len(DECLARED)}")


def registered(expectation: str) -> Declared | None:
    """The declaration of a finding's expectation ("<kind>" or "<kind>:<argument>"), None for an unknown kind."""
    return REGISTRY.get(expectation.partition(":")[0])


def clause_of(kind: str, operation: str, status: int | None) -> ClauseId | None:
    """The clause a finding of ``kind`` goes on, for an answer of ``operation`` (an operationId) with
    ``status``; None when the kind is no universal check."""
    placed = REGISTRY[kind].clause
    if placed is SUCCESS:
        return success_clause(operation) or CLAUSE_IDS.responses_documented
    if placed is DOCUMENTED:
        success = status is not None and 200 <= status < 300
        if (success or not success_shown(operation)) and (clause := success_clause(operation)):
            return clause
        return CLAUSE_IDS.responses_documented
    return placed if not isinstance(placed, Placement) else None


def clause_on(declaration: Declared, judged: Judged) -> ClauseId:
    """The clause the pipeline places a finding of ``declaration`` on, for this answer."""
    if declaration.place is not None:
        return declaration.place(judged)
    return clause_of(declaration.kind, judged.operation, judged.status) or CLAUSE_IDS.responses_documented


def check_for(expectation: str) -> Check:
    """The check a finding's expectation names; CannotRejudge when there is none to run again."""
    entry = registered(expectation)
    if entry is None:
        raise CannotRejudge(f"no check of kind {expectation.partition(':')[0]!r} to run again")
    if entry.again is None:
        if entry.kind == Kind.OWN:
            raise CannotRejudge(entry.not_again)
        raise CannotRejudge(f"cannot be judged again from one answer: {entry.not_again}")
    try:
        return entry.again(expectation.partition(":")[2])
    except ValueError:
        raise CannotRejudge(f"the expectation {expectation!r} is malformed") from None


def judge(check: Check, answer: Answer) -> Mismatch | None:
    """The Mismatch when the answer still breaks the check, else None."""
    try:
        check(answer)
    except Mismatch as mismatch:
        return mismatch
    return None


def _evidenced_pet(answer: Answer, instance: JsonValue, where: str) -> JsonObject:
    """``expect.pet``, its Mismatch given the exchange as evidence: the redacted exchange (which scans the
    whole body, a page can be megabytes) is built for a finding only, not for every answer."""
    try:
        return expect.pet(instance, where)
    except Mismatch as mismatch:
        mismatch.exchange = answer.exchange
        raise


def _items(answer: Answer) -> list[JsonValue]:
    try:
        body = answer.json()
    except (ValueError, RecursionError):
        return []
    return body if isinstance(body, list) else []


def _pet_id(url: str) -> int | None:
    """The int64 petId a read asked for, None for a path segment that is no int64."""
    segment = unquote(urlsplit(url).path.rstrip("/").rsplit("/", 1)[-1])
    pet_id = int(segment) if re.fullmatch(r"-?[0-9]{1,19}", segment) else None
    return pet_id if pet_id is not None and INT64_MIN <= pet_id <= INT64_MAX else None
