"""The closed vocabularies of the records: a clause's (and a test's) outcome, a run's verdict, why a clause
is undecided, what asking a finding again showed.  StrEnums: each member is its JSON string, so the records
cross processes and files as the same words.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = [
    "BLOCKING",
    "BUDGET",
    "CONFORMANT",
    "CONFORMS",
    "DEPLOYMENT",
    "EMPTY_STORE",
    "EXIT_CODES",
    "INCONCLUSIVE",
    "NOT_APPLICABLE",
    "NOT_CONFORMANT",
    "NOT_EXERCISED",
    "NOT_REASKED",
    "NOT_SELECTED",
    "NOT_SENT",
    "OTHER",
    "PRECONDITION",
    "REPEAT_WORDS",
    "REPRODUCED",
    "SEEN_ONCE",
    "STORE_TOO_LARGE",
    "TARGET",
    "THROTTLED",
    "UNDECIDED",
    "VIOLATED",
    "Outcome",
    "Reason",
    "Repeat",
    "Verdict",
]


class Outcome(StrEnum):
    """A clause's outcome (and a test's: ERROR is an error of the suite itself, a test's only)."""

    CONFORMS = "conforms"
    VIOLATED = "violated"
    UNDECIDED = "undecided"
    NOT_SELECTED = "not_selected"
    ERROR = "error"


class Verdict(StrEnum):
    """A run's verdict; its exit code in EXIT_CODES (pytest keeps 2-5 for itself)."""

    CONFORMANT = "conformant"
    NOT_CONFORMANT = "not_conformant"
    INCONCLUSIVE = "inconclusive"


class Reason(StrEnum):
    """Why a clause is undecided (a ``Note``'s kind).  Only the kinds in BLOCKING make a run inconclusive:
    a store too large to see whole, or an optional header that was not sent, leave the rest of the verdict
    standing."""

    TARGET = "target"
    BUDGET = "budget"
    PRECONDITION = "precondition"
    THROTTLED = "throttled"
    OTHER = "other"
    STORE_TOO_LARGE = "store_too_large"
    NOT_SENT = "not_sent"
    EMPTY_STORE = "empty_store"
    NOT_EXERCISED = "not_exercised"  # selected, but no check judged an exchange of the target for it
    # Not a reason for undecided: a note on a *conforming* clause whose rule applies only to what the target
    # chose to send, and it sent none of it (no Sunset header: read.sunset).  Nothing broke the rule; the note
    # says why no exchange showed it holding.
    NOT_APPLICABLE = "not_applicable"
    # A 5xx of the deployment (a gateway's page, a drained instance) that the same request did not get again:
    # no answer of the service to judge (``judging.flicker``).
    DEPLOYMENT = "deployment"


class Repeat(StrEnum):
    """A finding asked once more at the end of the run (``reask``): the same check failed again, it held,
    or the request was not sent again (with the reason).  Either way the finding stays a violation.
    UNASKED: the run's end has not decided it (yet)."""

    UNASKED = ""
    REPRODUCED = "reproduced"
    SEEN_ONCE = "seen_once"
    NOT_REASKED = "not_reasked"


CONFORMS, VIOLATED, UNDECIDED = Outcome.CONFORMS, Outcome.VIOLATED, Outcome.UNDECIDED
NOT_SELECTED = Outcome.NOT_SELECTED
CONFORMANT, NOT_CONFORMANT, INCONCLUSIVE = Verdict.CONFORMANT, Verdict.NOT_CONFORMANT, Verdict.INCONCLUSIVE
EXIT_CODES = {CONFORMANT: 0, NOT_CONFORMANT: 1, INCONCLUSIVE: 6}
TARGET, BUDGET, PRECONDITION, THROTTLED, OTHER = (
    Reason.TARGET,
    Reason.BUDGET,
    Reason.PRECONDITION,
    Reason.THROTTLED,
    Reason.OTHER,
)
STORE_TOO_LARGE, NOT_SENT, EMPTY_STORE = Reason.STORE_TOO_LARGE, Reason.NOT_SENT, Reason.EMPTY_STORE
NOT_EXERCISED, NOT_APPLICABLE, DEPLOYMENT = Reason.NOT_EXERCISED, Reason.NOT_APPLICABLE, Reason.DEPLOYMENT
BLOCKING = frozenset({TARGET, BUDGET, PRECONDITION, THROTTLED, OTHER, NOT_EXERCISED, DEPLOYMENT})
REPRODUCED, SEEN_ONCE, NOT_REASKED = Repeat.REPRODUCED, Repeat.SEEN_ONCE, Repeat.NOT_REASKED
REPEAT_WORDS: dict[str, str] = {REPRODUCED: "reproduced", SEEN_ONCE: "seen once", NOT_REASKED: "not re-asked"}
