"""Where the document is silent, HTTP decides: one request of every kind the document does not describe.

A body in another media type or none, an ``Accept`` the service may not satisfy, a path that names
nothing the document describes (a petId that is no int64, a trailing slash, another letter case).
The model of where the document is silent (``interface/silence.py``) gives, for each, the statuses
HTTP fits to it (RFC 9110 §15.5, RFC 6585); any of them with the Error body (§7: "All error
responses use the Error body") is compliant, and so is a 2xx that serves the request as the
document says (the pipeline judges that answer as the operation's).  A 5xx, an error page in HTML
or text, or a status that fits nothing is a fault.

Methods the document does not list are not sent: a DELETE or PUT could write to a shared store
(§4.4: "not shown").  Nor are URIs or header fields past 8 KiB: the model places them
(``uri-too-long``, ``headers-too-large``), but common servers refuse them in their HTTP parser,
before any handler a vendor could give the Error body (aiohttp's 8,190-byte line limit, nginx's
8 KiB header buffers), so such a probe would judge the stack, not the service.  Bodies differ: a
service or its proxy refuses a large body where the vendor configures it (``client_max_body_size``,
an ``error_page``), so the value edges send them (``run/writeplan.py``), judged here and there.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from petstore_contract.core.records import Mismatch
from petstore_contract.interface.clauses import CLAUSE_IDS
from petstore_contract.interface.silence import SILENCES, Placed
from petstore_contract.judging import expect
from petstore_contract.judging.expect import Judge
from petstore_contract.run import Run, ahead
from petstore_contract.run.ahead import sent_ahead
from petstore_contract.run.api import Request, Row, send_table
from petstore_contract.run.setup import Seeded

# The parts of set-up's plan of writes these tests judge (``selection.needed_writes``): requests the document does
# not describe, on paths of their own: none of set-up's animals.
SET_UP_WRITES = ()

PLAIN_BODY = {"categoryId": 1, "status": "available"}  # a NewPet, its name the run's own


class Outside:
    """One request the document does not describe: the silence it falls in (``SILENCES``), what it is."""

    def __init__(self, kind: str, method: str, path: str, writes: bool = False, **options: Any) -> None:
        self.kind, self.method, self.path, self.writes, self.options = kind, method, path, writes, options


OUTSIDE = {
    "new-pet-as-text-plain": Outside("media-type", "POST", "/pets", True, headers={"Content-Type": "text/plain"}),
    "form-encoded": Outside(
        "media-type",
        "POST",
        "/pets",
        True,
        data="name=Rex&categoryId=1",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    ),
    "post-without-body-or-type": Outside("media-type", "POST", "/pets", True),
    "accept-html-only": Outside("accept", "GET", "/pets", headers={"Accept": "text/html"}),
    "trailing-slash": Outside("path", "GET", "/pets/"),
    "other-letter-case": Outside("path", "GET", "/PETS"),
    "petid-not-int64": Outside("path", "GET", "/pets/not-an-id"),
}


def _table(run: Run) -> dict[str, Request]:
    table = {}
    for key, row in OUTSIDE.items():
        if row.writes and run.read_only:
            continue
        options = row.options
        if key == "new-pet-as-text-plain":
            options = {**options, "data": json.dumps({**PLAIN_BODY, "name": run.name("text-plain")})}
        table[key] = Request(row.method, row.path, **options)
    return table


@sent_ahead("outside")
def _outside(run: Run, seeded: Seeded) -> dict[str, Row]:
    return run.once_answers("outside", lambda: send_table(run.api, _table(run)))


@pytest.fixture(scope="module")
def outside(run: Run, seeded: Seeded) -> dict[str, Row]:
    return ahead.answers(run, "outside", seeded)


def _cases() -> list[Any]:
    return [pytest.param(key, id=key, marks=[pytest.mark.writes] * row.writes) for key, row in OUTSIDE.items()]


@pytest.mark.clause(CLAUSE_IDS.responses_documented, CLAUSE_IDS.errors_body)
@pytest.mark.parametrize("key", _cases())
def test_a_request_outside_the_document_gets_an_answer_http_allows(
    outside: dict[str, Row], judge: Judge, key: str
) -> None:
    answer, silence = outside[key], SILENCES[OUTSIDE[key].kind]
    # Placed as sent (a redirect the transport followed, e.g. from /pets/ to /pets, does not move it).
    placed = Placed(silence, key.replace("-", " "))
    with judge(CLAUSE_IDS.responses_documented):
        expect.no_server_error(answer)
        if 200 <= answer.status < 300:
            return  # served as the document's operation: the pipeline judges that answer as its own
        if not placed.fits(answer.status):
            wanted = ", ".join(map(str, silence.statuses))
            expected = f"a 2xx as the document says, or {wanted} with an Error body ({placed.why})"
            raise Mismatch(expected, f"HTTP {answer.status} with {expect.body_of(answer)}", answer.exchange)
    if answer.status >= 400:
        with judge(CLAUSE_IDS.errors_body):
            expect.error_body(answer)
