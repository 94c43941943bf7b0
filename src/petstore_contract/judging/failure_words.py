"""A Schemathesis failure in the document's and the RFCs' words: what was expected, what came back.

Schemathesis names its failures by check ("UndefinedStatusCode") and words them in its own terms; a
finding says instead which sentence the answer broke ("a status the Responses table of POST /pets
lists (201, 400, 401)") and what the answer was ("HTTP 200", the answer beside it).  The check's name stays in the
finding's ``expectation`` (its signature: waivers, compare), never in a line a person reads.  Keyed by
Schemathesis' failure codes (``generated``: stable identities); a code this table does not word is
said as the failure's own title, still without the check's name.
"""

from __future__ import annotations

from collections.abc import Callable

from petstore_contract.core.records import cut
from petstore_contract.interface.spec import answer_schema, operation_id, operation_of, statuses

SCHEMAS = {"Pet": "a Pet", "Pet[]": "a JSON array of Pet", "Error": "an Error (code, message, status)"}


def _table(operation: str, label: str) -> str:
    listed = ", ".join(statuses(operation))
    return f"the Responses table of {label}" + (f" lists ({listed})" if listed else "")


def _listed(operation: str, first: str, otherwise: str) -> str:
    """The statuses of one class the operation's table lists, "400" or "200 or 201" (``otherwise`` if none)."""
    listed = [status for status in statuses(operation) if status.startswith(first)]
    return " or ".join(listed) or otherwise


def _body(operation: str, label: str, status: int | None) -> str:
    schema = answer_schema(operation, status) if status is not None else None
    shape = SCHEMAS.get(schema or "", f"a body of the {schema} schema" if schema else "the body")
    return f"{shape}, as the Responses table of {label} gives HTTP {status}"


# Schemathesis' failure code -> the expectation in words, from (operationId, "METHOD /path", status).
WORDS: dict[str, Callable[[str, str, int | None], str]] = {
    "ST101": lambda op, label, status: "no 5xx answer (§4: no Responses table lists a 5xx; §7)",
    "ST102": lambda op, label, status: "no 5xx answer, whatever the request's Content-Type (§4, §7)",
    "ST103": lambda op, label, status: f"a status {_table(op, label)}",
    "ST104": lambda op, label, status: "a Content-Type header: application/json (§1: bodies are JSON)",
    "ST105": lambda op, label, status: "Content-Type: application/json (§1: bodies are JSON)",
    "ST106": lambda op, label, status: "a well-formed Content-Type: application/json (§1; RFC 9110 §8.3.1)",
    "ST107": lambda op, label, status: f"the response headers the document gives {label}",
    "ST108": lambda op, label, status: _body(op, label, status),
    "ST109": lambda op, label, status: "a JSON body (§1: request and response bodies are JSON)",
    "ST110": lambda op, label, status: "a body in the media type its Content-Type names (§1)",
    "ST201": lambda op, label, status: (
        f"{_listed(op, '4', 'a 4xx')} with an Error body to a request of {label} "
        "that its parameters or body rule out (§7)"
    ),
    "ST202": lambda op, label, status: f"{_listed(op, '2', 'a 2xx')}, {label}'s documented success, to a valid request",
    "ST203": lambda op, label, status: "401 with an Error body to a request without the Authorization header (§5.3)",
    "ST204": lambda op, label, status: (
        f"405 with Allow to a method {label.split(' ', 1)[-1]} does not offer (RFC 9110 §15.5.6)"
    ),
    "ST205": lambda op, label, status: "an Allow header on a 405 (RFC 9110 §15.5.6)",
    "ST302": lambda op, label, status: "the animal a 201 just created, read back by GET /pets/{petId} (§4.2, §4.3)",
    "ST401": lambda op, label, status: "401 to a request without a valid key (§5.3)",
}
# The codes whose observation is the answer itself: its status (and body) is what broke the sentence.
ANSWERED = frozenset({"ST101", "ST102", "ST103", "ST201", "ST202", "ST203", "ST401"})


def expected(code: str, method: str, url: str, status: int | None, title: str) -> str:
    """What the answer should have been, in the document's words (the failure's title for a code not worded)."""
    label, operation = operation_of(method, url), operation_id(method, url)
    words = WORDS.get(code)
    if words is None:
        return f"an answer the document allows ({' '.join(title.split()) or 'a check of the generated tests'})"
    return words(operation, label, status)


def observed(code: str, status: int | None, title: str, message: str) -> str:
    """What came back: the status where the status broke the rule, else the failure's own account of it
    (which schema rule, which header), after the status."""
    if code in ANSWERED and status is not None:
        # The status alone (the body is the exchange's, shown beside it): one answer to many drawn cases folds.
        return f"HTTP {status}"
    account = " ".join(f"{title}. {message}".split())
    return cut(f"HTTP {status}: {account}" if status is not None else account, 500)
