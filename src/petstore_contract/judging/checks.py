"""The check registry: every kind of check a finding records (``record.Kind``), in one table.

Each kind maps to its check (made from the argument a finding recorded, ``status:401`` -> 401), the
clause the pipeline of every exchange (``oracle.py``) places a finding of it on, and whether a
finding of it can be asked again at the end of a run (``reask.py``) and judged by the same check
(``petstore-contract replay`` too).  A kind that needs more than one answer (a page compared with the
store, a field compared with what was created) or the generated case (Schemathesis' own checks)
has no check here: its entry says why in one line.

Clause placement is derived from the two sources of the interface: ``clauses.toml`` names the clause
of each operation's success (``operation = "createPet"``), and ``spec/openapi.yaml`` says which
statuses each operation documents and whether its success answer has a shape at all.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from petstore_contract.core.kinds import Kind
from petstore_contract.core.records import Mismatch
from petstore_contract.interface.clauses import CLAUSE_IDS, success_clause
from petstore_contract.interface.spec import success_shown
from petstore_contract.judging import expect

# Called with an answer (``expect.Answer``: a targeted test's, or the replay's); raises Mismatch when it
# still breaks the check.  Typed loosely: the transport's frozen Answer reads like the Protocol.
Check = Callable[[Any], Any]

# A kind placed on the clause of the operation's success (``clauses.success_clause``).
SUCCESS = "<the operation's success clause>"
# A 5xx (or an undocumented status that is no success): the operation's success clause where the
# document shows no shape for its success (GET /store/orders: all it says is that it exists), else
# ``responses.documented``.
DOCUMENTED = "<the operation's documented answers>"


class CannotRejudge(Exception):
    """One line: why this finding's check cannot be judged again from one answer."""


def _statuses(argument: str) -> Check:
    wanted = tuple(int(code) for code in argument.split(","))
    return lambda answer: expect.status(answer, *wanted)


def _challenge_of_401(answer: expect.Answer) -> None:
    """RFC 9110 §11.6.1 asks a challenge of a 401; an answer that is no 401 does not decide it."""
    if answer.status != 401:
        raise CannotRejudge(f"the answer is now HTTP {answer.status}, not a 401: its challenge is not asked for")
    expect.bearer_challenge(answer)


def _pet_body(answer: expect.Answer) -> None:
    expect.pet(expect.parse_json(answer), "the body", answer.exchange)


@dataclass(frozen=True)
class Registered:
    """One kind of check: how to run it again, where the pipeline places it, or why it cannot be re-run."""

    kind: Kind
    check: Callable[[str], Check] | None  # made from the argument (the text after "kind:")
    clause: str | None = None  # a clause id, SUCCESS or DOCUMENTED; None: the test's judge block names it
    not_again: str = ""  # why a finding of it cannot be judged again from one answer

    @property
    def reaskable(self) -> bool:
        return self.check is not None


REGISTRY: dict[Kind, Registered] = {
    entry.kind: entry
    for entry in (
        Registered(Kind.STATUS, _statuses),
        Registered(Kind.KEY_ACCEPTED, lambda _: expect.key_accepted, CLAUSE_IDS.auth_accepted),
        Registered(Kind.NO_SERVER_ERROR, lambda _: expect.no_server_error, DOCUMENTED),
        Registered(
            Kind.DOCUMENTED_STATUS,
            None,
            DOCUMENTED,
            "which statuses are documented depends on the operation, which the finding's request names",
        ),
        Registered(Kind.JSON_MEDIA_TYPE, lambda _: expect.json_media_type, CLAUSE_IDS.json_content_type),
        Registered(Kind.JSON_BODY, lambda _: expect.parse_json),
        Registered(Kind.ERROR_BODY, lambda _: expect.error_body, CLAUSE_IDS.errors_body),
        Registered(Kind.PET_BODY, lambda _: _pet_body, SUCCESS),
        Registered(Kind.PET_LIST, lambda _: expect.pet_list, SUCCESS),
        Registered(Kind.PET, None, None, "it judges one animal inside a larger answer that the check chose"),
        Registered(Kind.SAME_FIELD, None, None, "it compares a field with what the suite created or sent before"),
        Registered(
            Kind.SAME_ANIMAL,
            None,
            CLAUSE_IDS.list_item_same,
            "it compares an animal with the same id as another answer showed it",
        ),
        Registered(Kind.BEARER_CHALLENGE, lambda _: _challenge_of_401, CLAUSE_IDS.auth_challenge),
        Registered(Kind.DEPRECATION_SCOPE, lambda _: expect.not_deprecated, CLAUSE_IDS.deprecation_scope),
        Registered(
            Kind.DEPRECATION_HEADER,
            None,
            None,
            "the generated test's check needs the operation's deprecation in the schema",
        ),
        Registered(
            Kind.DEPRECATION_FUTURE, None, None, "whether a date is in the future depends on when the answer was given"
        ),
        Registered(
            Kind.SCHEMATHESIS,
            None,
            None,
            "Schemathesis' checks judge an answer against the generated case and the operation's schema",
        ),
        Registered(
            Kind.OWN,
            None,
            None,
            "its check records no kind that could be run again (a check written in the test itself)",
        ),
    )
}
# Every kind a finding can record has its entry: a kind added to record.Kind without one fails at import.
if set(REGISTRY) != set(Kind):  # pragma: no cover - a development error, caught by any import
    raise RuntimeError(f"kinds without a registry entry: {sorted(set(Kind) - set(REGISTRY))}")


def registered(expectation: str) -> Registered | None:
    """The registry's entry for a finding's expectation ("<kind>" or "<kind>:<argument>"), None for an unknown kind."""
    kind, _, _ = expectation.partition(":")
    try:
        return REGISTRY[Kind(kind)]
    except ValueError:
        return None


def clause_of(kind: Kind, operation: str, status: int | None) -> str | None:
    """The clause the pipeline places a finding of ``kind`` on, for an answer of ``operation`` (an
    operationId) with ``status``; None when the kind is no universal check."""
    placed = REGISTRY[kind].clause
    if placed == SUCCESS:
        return success_clause(operation) or CLAUSE_IDS.responses_documented
    if placed == DOCUMENTED:
        success = status is not None and 200 <= status < 300
        if (success or not success_shown(operation)) and success_clause(operation):
            return success_clause(operation)
        return CLAUSE_IDS.responses_documented
    return placed


def check_for(expectation: str) -> Check:
    """The check a finding's expectation names; CannotRejudge when there is none to run again."""
    entry = registered(expectation)
    if entry is None:
        raise CannotRejudge(f"no check of kind {expectation.partition(':')[0]!r} to run again")
    if entry.check is None:
        if entry.kind == Kind.OWN:
            raise CannotRejudge(entry.not_again)
        raise CannotRejudge(f"cannot be judged again from one answer: {entry.not_again}")
    try:
        return entry.check(expectation.partition(":")[2])
    except ValueError:
        raise CannotRejudge(f"the expectation {expectation!r} is malformed") from None


def judge(check: Check, answer: Any) -> Mismatch | None:
    """The Mismatch when the answer still breaks the check, else None."""
    try:
        check(answer)
    except Mismatch as mismatch:
        return mismatch
    return None
