"""§5 Authentication: the valid key in the documented form, and nothing else, opens every operation.

Every operation (GET /store/orders included) is asked with every refused credential form and
with the request's other parts valid or not (authentication comes first); each answer is judged
on its own clause (401), on the Bearer challenge (RFC 9110 §11.6.1) and on the Error body (§7).
The requests of the table go out side by side once; each test judges its row.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, TypeGuard

import pytest

from petstore_contract.core.records import PRECONDITION, Mismatch, undecided
from petstore_contract.interface.clauses import CLAUSE_IDS
from petstore_contract.interface.silence import classify
from petstore_contract.judging import expect, headers
from petstore_contract.judging.expect import Judge, cut_short
from petstore_contract.run import Run, ahead
from petstore_contract.run.ahead import sent_ahead
from petstore_contract.run.api import UNSET, Api, Request, Row, Unanswered, attempt, send_table
from petstore_contract.run.selection import OWN
from petstore_contract.run.setup import Seeded
from petstore_contract.transport import Answer

# The parts of set-up's plan of writes these tests judge (``selection.needed_writes``): credentials are tried on an
# animal of the suite's own.
SET_UP_WRITES = (OWN,)


@dataclass(frozen=True)
class Operation:
    name: str
    method: str
    path: str
    body: Any = UNSET  # a valid NewPet for createPet (its name made unique per request)


OPERATIONS = (
    Operation("listPets", "GET", "/pets"),
    Operation("createPet", "POST", "/pets", {"categoryId": 1, "status": "available"}),
    Operation("getPet", "GET", "/pets/{own}"),
    Operation("listOrders", "GET", "/store/orders"),
)


@dataclass(frozen=True)
class Credential:
    """A way of presenting (or not) the key: Authorization value, other headers, query parameters."""

    clause: str
    authorization: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    query: tuple[tuple[str, str], ...] = ()


# Credentials §5.2-§5.3 say to refuse. {key} is the valid key; near misses are made from it (api.near_misses).
REFUSED = {
    "missing": Credential(CLAUSE_IDS.auth_missing),
    "empty-token": Credential(CLAUSE_IDS.auth_invalid, "Bearer "),
    "scheme-only": Credential(CLAUSE_IDS.auth_invalid, "Bearer"),
    "wrong-key": Credential(CLAUSE_IDS.auth_invalid, "Bearer {wrong_key}"),
    "key-plus-char": Credential(CLAUSE_IDS.auth_invalid, "Bearer {key}x"),
    "key-minus-char": Credential(CLAUSE_IDS.auth_invalid, "Bearer {key_prefix}"),
    "key-prefix-half": Credential(CLAUSE_IDS.auth_invalid, "Bearer {key_half}"),
    "key-case-changed": Credential(CLAUSE_IDS.auth_invalid, "Bearer {key_swapcase}"),
    "key-twice": Credential(CLAUSE_IDS.auth_invalid, "Bearer {key}{key}"),
    "basic-scheme": Credential(CLAUSE_IDS.auth_invalid, "Basic {key_b64}"),
    "token-scheme": Credential(CLAUSE_IDS.auth_invalid, "Token {key}"),
    "no-scheme": Credential(CLAUSE_IDS.auth_invalid, "{key}"),
    # The key elsewhere than in the documented form is not the documented credential (§5.2).
    "x-api-key-header": Credential(CLAUSE_IDS.auth_invalid, None, (("X-API-Key", "{key}"),)),
    "api-key-header": Credential(CLAUSE_IDS.auth_invalid, None, (("Api-Key", "{key}"),)),
    "key-in-query": Credential(CLAUSE_IDS.auth_invalid, None, (), (("access_token", "{key}"), ("api_key", "{key}"))),
    "wrong-key-and-key-in-query": Credential(
        CLAUSE_IDS.auth_invalid, "Bearer {wrong_key}", (), (("api_key", "{key}"),)
    ),
    # Header field names are case-insensitive (RFC 9110 §5.1; HTTP/2 sends them in lower case): a wrong key
    # under ``authorization`` is the same refused credential.
    "wrong-key-lower-case-name": Credential(CLAUSE_IDS.auth_invalid, None, (("authorization", "Bearer {wrong_key}"),)),
}
# The valid key in the documented form (§5.2), and under the field name in lower case (RFC 9110 §5.1: "Field
# names are case-insensitive"): the same credential, accepted on every operation.
ACCEPTED = {
    "": Credential("", "Bearer {key}"),
    "-lower-case-name": Credential("", None, (("authorization", "Bearer {key}"),)),
}
# Whatever else a request carries, authentication comes first (§5.3, issue 40: "the credential check comes
# before everything else"): (operation, request parts), each crossed with every carried credential.  A path
# that names nothing the document describes may get a fitting 4xx Error instead (interface/silence.py: a
# router answers it before any key is read), never an animal.
CARRYING = {
    "list-bad-params": ("listPets", {"params": {"limit": "0", "status": "bogus"}}),
    "create-invalid-body": ("createPet", {"json_body": {"name": 5}}),
    "create-no-body": ("createPet", {"data": b""}),
    "create-not-json": ("createPet", {"data": b'{"name": "Rex", "categoryId": 1'}),
    "create-text-plain": ("createPet", {"data": b'{"categoryId": 1}', "headers": {"Content-Type": "text/plain"}}),
    "read-unknown-id": ("getPet", {"path": "/pets/9223372036854775000"}),
    "read-malformed-id": ("getPet", {"path": "/pets/abc"}),
    "list-trailing-slash": ("listPets", {"path": "/pets/"}),
    "list-other-case": ("listPets", {"path": "/PETS"}),
    "orders-params": ("listOrders", {"params": {"customerId": "1", "limit": "5"}}),
}
# No Authorization, a wrong key, a near miss of the key, another scheme.
CARRIED_CREDENTIALS = ("missing", "wrong-key", "key-minus-char", "basic-scheme")
SCHEMES = ("bearer", "BEARER", "Bearer", "bEaReR")


def _send(api: Api, run: Run, op: Operation, own_id: int, credential: Credential, extra: dict[str, Any]) -> Answer:
    path = extra.get("path", op.path).replace("{own}", str(own_id))
    kwargs: dict[str, Any] = {
        "authorization": credential.authorization,
        "headers": {**dict(credential.headers), **extra.get("headers", {})},
        "params": {**dict(credential.query), **extra.get("params", {})},
    }
    if "json_body" in extra:
        kwargs["json_body"] = extra["json_body"]
    elif "data" in extra:
        kwargs["data"] = extra["data"]
    elif op.body is not UNSET:
        # A name of its own for each row: a refused create that still adds its animal shows under that name
        # (judging/refusals.py), and no accepted create of another row hides it.
        tag = hashlib.sha1(f"{op.name}-{credential}-{extra}".encode()).hexdigest()[:6]
        kwargs["json_body"] = {**op.body, "name": run.name(f"auth-{tag}")}
    return api.request(op.method, path, **kwargs)


def _own_id(seeded: Seeded) -> int:
    pets = seeded.own or seeded.before
    return int(pets[0]["id"]) if pets else 1


def _rows(read_only: bool) -> list[tuple[str, Operation, Credential, dict[str, Any]]]:
    rows = [(f"{op.name}-{name}", op, cred, {}) for op in OPERATIONS for name, cred in REFUSED.items()]
    ops = {op.name: op for op in OPERATIONS}
    rows += [
        (f"{case}-{cred}", ops[op], REFUSED[cred], extra)
        for case, (op, extra) in CARRYING.items()
        for cred in CARRIED_CREDENTIALS
    ]
    return [row for row in rows if not (read_only and row[1].method == "POST")]


@sent_ahead("refused")
def _refused(run: Run, seeded: Seeded) -> dict[str, Row]:
    rows = {row[0]: row for row in _rows(run.read_only)}
    own = _own_id(seeded)
    return run.once_answers("refused", lambda: _send_rows(run.api, run, own, rows))


@pytest.fixture(scope="module")
def refused(run: Run, seeded: Seeded) -> dict[str, Row]:
    return ahead.answers(run, "refused", seeded)


def _send_rows(api: Api, run: Run, own: int, rows: dict[str, Any]) -> dict[str, Row]:
    """Each row on its own: an unanswered one is undecided alone (``api.Unanswered``)."""
    keys = list(rows)
    answers = api.map(lambda key: attempt(lambda: _send(api, run, rows[key][1], own, rows[key][2], rows[key][3])), keys)
    return dict(zip(keys, answers, strict=True))


# The key elsewhere than in Authorization: only meaningful where a request without Authorization is refused.
ELSEWHERE = {
    name
    for name, cred in REFUSED.items()
    if cred.authorization is None
    and (cred.query or any(header.lower() != "authorization" for header, _ in cred.headers))
}


def _missing_row(row_id: str) -> str | None:
    """For a key-elsewhere row, the same operation's row that sends no credential at all."""
    operation, _, name = row_id.partition("-")
    return f"{operation}-missing" if name in ELSEWHERE else None


def _cases() -> list[Any]:
    return [
        pytest.param(
            row_id,
            cred.clause,
            id=row_id,
            marks=[pytest.mark.clause(cred.clause)] + [pytest.mark.writes] * (op.method == "POST"),
        )
        for row_id, op, cred, _ in _rows(read_only=False)
    ]


@pytest.mark.clause(CLAUSE_IDS.auth_challenge, CLAUSE_IDS.auth_challenge_quiet, CLAUSE_IDS.errors_body)
@pytest.mark.parametrize(("row_id", "clause"), _cases())
def test_refused_credential_gets_401(refused: dict[str, Row], judge: Judge, row_id: str, clause: str) -> None:
    answer = refused[row_id]
    if clause != CLAUSE_IDS.auth_missing:
        judge.nothing_to_judge(CLAUSE_IDS.auth_challenge_quiet)  # its rule is about requests without credentials
    if _cut(answer) and not _as_bare(refused, row_id):
        # An answer that never completed (RFC 9112 §6.3) is the credential clause's finding; with no whole
        # answer there is no challenge or Error body to read: those are the other rows' to decide.
        with judge(clause):
            raise answer.problem
        _nothing_else(judge, CLAUSE_IDS.auth_challenge, CLAUSE_IDS.auth_challenge_quiet, CLAUSE_IDS.errors_body)
        return
    if _as_bare(refused, row_id):
        # The operation answers a request without credentials otherwise than 401 (auth.missing's finding on
        # its own row), and this key elsewhere got that same answer: the server read no credential in it, so
        # whether it would take the key there is nothing this row can show; auth.invalid is decided on the
        # rows whose operation refuses a request without credentials with 401.
        _nothing_else(judge, clause, CLAUSE_IDS.auth_challenge, CLAUSE_IDS.auth_challenge_quiet)
        if _cut(answer):
            judge.nothing_to_judge(CLAUSE_IDS.errors_body)  # no whole answer to read
        else:
            judge.error_body(answer)
        return
    placed = classify(answer.exchange.method, answer.exchange.url, dict(answer.exchange.request_headers))
    if not placed.credential_first and answer.status != 401 and placed.fits(answer.status):
        # A path that names nothing the document describes (``/pets/abc``): a router may answer it before
        # any key is read, with a 404 or 400 Error, as it answers any path it does not hold (RFC 9110
        # §15.5.5); no animal is revealed.  Its Error body is still §7's.
        with judge(CLAUSE_IDS.errors_body):
            expect.error_body(answer)
        _nothing_else(judge, clause, CLAUSE_IDS.auth_challenge, CLAUSE_IDS.auth_challenge_quiet)
        return
    with judge(clause):
        expect.status(answer, 401)
    if answer.status != 401:
        # No 401 (the credential clause's finding), so no challenge to read; a refusal with another status
        # (a 400, a 403) still carries §7's Error body, an answer that is no refusal carries none.
        _nothing_else(judge, CLAUSE_IDS.auth_challenge, CLAUSE_IDS.auth_challenge_quiet)
        judge.error_body(answer)
        return
    with judge(CLAUSE_IDS.auth_challenge):
        expect.bearer_challenge(answer)
    with judge(CLAUSE_IDS.errors_body):
        expect.error_body(answer)
    with judge(CLAUSE_IDS.json_content_type):
        expect.json_media_type(answer)
    challenge = answer.headers.get("www-authenticate") or ""
    if "bearer" not in headers.challenge_schemes(challenge):
        # A 401 without a Bearer challenge (auth.challenge's finding): the quiet challenge's rule has
        # nothing here to apply to.
        judge.nothing_to_judge(CLAUSE_IDS.auth_challenge_quiet)
    elif clause == CLAUSE_IDS.auth_missing:
        # Judged only on a Bearer challenge: a 401 without one is auth.challenge's to judge, not a quiet one.
        with judge(CLAUSE_IDS.auth_challenge_quiet):
            if "error=" in challenge:
                judge.warnings.append(
                    "a 401 to a request without credentials names an error code (RFC 6750 §3.1 SHOULD NOT)"
                )
                raise Mismatch(
                    "no error= parameter without credentials", f"WWW-Authenticate: {challenge}", answer.exchange
                )


def _cut(row: Row) -> TypeGuard[Unanswered]:
    """A row whose answer started and never completed (``expect.cut_short``)."""
    return isinstance(row, Unanswered) and cut_short(row.problem) is not None


def _as_bare(refused: dict[str, Row], row_id: str) -> bool:
    """A key-elsewhere row answered as its operation's request without credentials was, where that one got
    no 401 (a 2xx, a 403, an answer cut short): the same status, or both cut short.  A row unanswered for
    another reason raises its problem: nothing is decided on it."""
    bare = _missing_row(row_id)
    if bare is None or bare not in refused:
        return False
    without, row = refused[bare], refused[row_id]
    if _cut(without) or _cut(row):
        return _cut(without) and _cut(row)
    return without.status != 401 and row.status == without.status


def _nothing_else(judge: Judge, *clauses: str) -> None:
    for clause in clauses:
        judge.nothing_to_judge(clause)


@sent_ahead("accepted")
def _accepted(run: Run, seeded: Seeded) -> dict[str, Row]:
    rows = {
        f"{op.name}{form}": (op.name, op, valid, {})
        for op in OPERATIONS
        for form, valid in ACCEPTED.items()
        if not (run.read_only and op.method == "POST")
    }
    return run.once_answers("accepted", lambda: _send_rows(run.api, run, _own_id(seeded), rows))


@pytest.fixture(scope="module")
def accepted(run: Run, seeded: Seeded) -> dict[str, Row]:
    return ahead.answers(run, "accepted", seeded)


@pytest.mark.clause(CLAUSE_IDS.auth_accepted)
@pytest.mark.parametrize(
    "operation",
    [
        pytest.param(f"{op.name}{form}", id=f"{op.name}{form}", marks=[pytest.mark.writes] * (op.method == "POST"))
        for op in OPERATIONS
        for form in ACCEPTED
    ],
)
def test_valid_key_is_accepted(accepted: dict[str, Row], judge: Judge, operation: str) -> None:
    answer = accepted[operation]
    with judge(CLAUSE_IDS.auth_accepted):
        expect.key_accepted(answer)


# The operations the scheme's case is tried on, in order: the first whose valid key in its documented form
# was accepted judges it (a service that refuses the key on one operation, auth.accepted's finding, still
# has its scheme's case judged on the other).
SCHEME_OPERATIONS = {"listOrders": "/store/orders", "listPets": "/pets"}


@sent_ahead("schemes")
def _schemes(run: Run, seeded: Seeded) -> dict[str, Row]:
    table = {
        f"{op}-{s}": Request("GET", path, authorization=f"{s} {{key}}")
        for op, path in SCHEME_OPERATIONS.items()
        for s in SCHEMES
    }
    return run.once_answers("schemes", lambda: send_table(run.api, table))


@pytest.fixture(scope="module")
def schemes(run: Run, seeded: Seeded) -> dict[str, Row]:
    return ahead.answers(run, "schemes", seeded)


@pytest.mark.clause(CLAUSE_IDS.auth_scheme_case)
@pytest.mark.parametrize("scheme", SCHEMES)
def test_scheme_name_is_case_insensitive(
    schemes: dict[str, Row], accepted: dict[str, Row], judge: Judge, scheme: str
) -> None:
    operation = next((op for op in SCHEME_OPERATIONS if accepted[op].status not in (401, 403)), None)
    if operation is None:
        paths = " and ".join(f"GET {path}" for path in SCHEME_OPERATIONS.values())
        reason = f"{paths} refused the valid key in its documented form"
        raise undecided(CLAUSE_IDS.auth_scheme_case, PRECONDITION, reason, blocked_by=CLAUSE_IDS.auth_accepted)
    answer = schemes[f"{operation}-{scheme}"]
    with judge(CLAUSE_IDS.auth_scheme_case):
        expect.key_accepted(answer, f"the key accepted under the scheme {scheme!r}")
