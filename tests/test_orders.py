"""§4.4 GET /store/orders exists; its parameters and payloads are not shown.

So any 2xx is accepted (a JSON body must say so), and so is a 4xx Error that asks for what the
document does not show (a required query parameter, say); a 404 says the operation is missing
and a 5xx that it is broken.
"""

from __future__ import annotations

import pytest

from petstore_contract.core.records import Mismatch
from petstore_contract.interface.clauses import CLAUSE_IDS
from petstore_contract.judging import expect
from petstore_contract.judging.expect import Judge
from petstore_contract.run import Run, ahead
from petstore_contract.run.ahead import sent_ahead
from petstore_contract.run.api import Request, Row, send_table
from petstore_contract.run.setup import Seeded

# The parts of set-up's plan of writes these tests judge (``selection.needed_writes``): GET /store/orders alone:
# none of set-up's animals.
SET_UP_WRITES = ()


@sent_ahead("orders")
def _orders(run: Run, seeded: Seeded) -> dict[str, Row]:
    return run.once_answers("orders", lambda: send_table(run.api, {"orders": Request("GET", "/store/orders")}))


@pytest.fixture(scope="module")
def orders(run: Run, seeded: Seeded) -> dict[str, Row]:
    return ahead.answers(run, "orders", seeded)


@pytest.mark.clause(CLAUSE_IDS.orders_available)
def test_orders_answer_an_authorised_client(orders: dict[str, Row], judge: Judge) -> None:
    answer = orders["orders"]
    with judge(CLAUSE_IDS.orders_available):
        if answer.status == 404:
            raise Mismatch("the operation to exist (§4.4)", "HTTP 404", answer.exchange)
        expect.no_server_error(answer)
    if 400 <= answer.status < 500 and answer.status not in (401, 403, 404):
        with judge(CLAUSE_IDS.errors_body):
            expect.error_body(answer)
    if 200 <= answer.status < 300 and answer.body:
        with judge(CLAUSE_IDS.json_content_type):
            expect.json_media_type(answer)
