"""§4.4 GET /store/orders exists; its parameters and payloads are not shown."""

from __future__ import annotations

import pytest

from petstore_contract import expect
from petstore_contract.client import ContractClient


@pytest.mark.clause("orders.available")
def test_orders_answer_an_authorised_client(api: ContractClient) -> None:
    answer = api.get("/store/orders")
    assert answer.status != 404, "GET /store/orders answered 404: §4.4 says the operation exists"
    expect.no_server_error(answer)
    if 200 <= answer.status < 300 and answer.body:
        expect.json_media_type(answer)
        answer.json()
