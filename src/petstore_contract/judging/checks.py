"""Checks that can judge one answer again, by the kind a finding records (``Finding.expectation``).

A check of ``expect`` that fails records its kind as data (``status:401``, ``error-body``,
``bearer-challenge``, ...); ``check_for`` gives the same check again, for ``petstore-contract
replay``.  A kind that needs more than one answer (a page compared with the store, a field compared
with what was created) or the generated case (Schemathesis' own checks) is not here:
``check_for`` then says why in one line.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from petstore_contract.core.records import Mismatch
from petstore_contract.judging import expect

# Called with an answer (``expect.Answer``: a targeted test's, or the replay's); raises Mismatch when it
# still breaks the check.  Typed loosely: the transport's frozen Answer reads like the Protocol.
Check = Callable[[Any], Any]


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


# kind -> the check, made from the expectation's argument (the text after "kind:")
CHECKS: dict[str, Callable[[str], Check]] = {
    "status": _statuses,
    "no-5xx": lambda _: expect.no_server_error,
    "json-media-type": lambda _: expect.json_media_type,
    "error-body": lambda _: expect.error_body,
    "json-body": lambda _: expect.parse_json,
    "pet-list": lambda _: expect.pet_list,
    "bearer-challenge": lambda _: _challenge_of_401,
    "deprecation-scope": lambda _: expect.not_deprecated,
    "key-accepted": lambda _: expect.key_accepted,
}
# kinds known not to be judged from one answer, and why
NOT_FROM_ONE_ANSWER = {
    "same-field": "it compares a field with what the suite created or sent before",
    "pet": "it judges one animal inside a larger answer that the check chose",
    "schemathesis": "Schemathesis' checks judge an answer against the generated case and the operation's schema",
    "deprecation-header": "the generated test's check needs the operation's deprecation in the schema",
    "deprecation-future": "whether a date is in the future depends on when the answer was given",
}


def check_for(expectation: str) -> Check:
    """The check a finding's expectation names; CannotRejudge when there is none to run again."""
    kind, _, argument = expectation.partition(":")
    if kind in CHECKS:
        try:
            return CHECKS[kind](argument)
        except ValueError:
            raise CannotRejudge(f"the expectation {expectation!r} is malformed") from None
    if kind in NOT_FROM_ONE_ANSWER:
        raise CannotRejudge(f"cannot be judged again from one answer: {NOT_FROM_ONE_ANSWER[kind]}")
    if not expectation:
        raise CannotRejudge("its check records no kind that could be run again (a check written in the test itself)")
    raise CannotRejudge(f"no check of kind {kind!r} to run again")


def judge(check: Check, answer: Any) -> Mismatch | None:
    """The Mismatch when the answer still breaks the check, else None."""
    try:
        check(answer)
    except Mismatch as mismatch:
        return mismatch
    return None
