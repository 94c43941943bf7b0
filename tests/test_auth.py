"""§5 Authentication: a bearer API key on every operation; 401 with an Error and a Bearer challenge."""

from __future__ import annotations

from typing import Any

import pytest

from petstore_contract import expect
from petstore_contract.client import ContractClient

# (method, path, json body) of every operation; the body is a valid NewPet.
OPERATIONS = {
    "listPets": ("GET", "/pets", None),
    "createPet": ("POST", "/pets", {"name": "AuthProbe", "categoryId": 1}),
    "getPet": ("GET", "/pets/1", None),
    "listOrders": ("GET", "/store/orders", None),
}
# Credentials §5.2-5.3 say to refuse: (clause, Authorization header or None, query parameters).
REFUSED = {
    "missing": ("auth.missing", None, {}),
    "wrong-key": ("auth.invalid", "Bearer not-the-key-0123456789", {}),
    "empty-token": ("auth.invalid", "Bearer ", {}),
    "basic-scheme": ("auth.invalid", "Basic {key_b64}", {}),
    "no-scheme": ("auth.invalid", "{key}", {}),
    "key-in-query": ("auth.invalid", None, {"access_token": "{key}", "api_key": "{key}"}),
}


def _cases() -> list[Any]:
    return [
        pytest.param(
            op,
            header,
            query,
            id=f"{op_name}-{name}",
            marks=[pytest.mark.clause(clause), *([pytest.mark.writes] if op[0] == "POST" else [])],
        )
        for op_name, op in OPERATIONS.items()
        for name, (clause, header, query) in REFUSED.items()
    ]


def _send(api: ContractClient, op: tuple[str, str, Any], authorization: str | None, query: dict[str, str]) -> Any:
    method, path, body = op
    kwargs: dict[str, Any] = {"authorization": authorization, "params": query}
    if body is not None:
        kwargs["json_body"] = body
    return api.request(method, path, **kwargs)


@pytest.mark.parametrize(("op", "authorization", "query"), _cases())
def test_refused_credential_gets_401_error(
    api: ContractClient, op: tuple[str, str, Any], authorization: str | None, query: dict[str, str]
) -> None:
    expect.error_body(_send(api, op, authorization, query), 401)


@pytest.mark.clause("auth.challenge")
@pytest.mark.parametrize(
    "op",
    [
        pytest.param(op, id=name, marks=[pytest.mark.writes] if op[0] == "POST" else [])
        for name, op in OPERATIONS.items()
    ],
)
@pytest.mark.parametrize("authorization", [None, "Bearer wrong-key"], ids=["missing", "wrong-key"])
def test_401_carries_bearer_challenge(api: ContractClient, op: tuple[str, str, Any], authorization: str | None) -> None:
    answer = _send(api, op, authorization, {})
    expect.status(answer, 401)
    challenges = answer.headers.get("www-authenticate")
    assert challenges, "401 without a WWW-Authenticate header (RFC 9110 §11.6.1)"
    schemes = [part.strip().split(None, 1)[0].lower() for part in challenges.split(",") if part.strip()]
    assert "bearer" in schemes, f"WWW-Authenticate offers no Bearer challenge: {challenges!r} (RFC 6750 §3)"


@pytest.mark.clause("auth.scheme-case")
@pytest.mark.parametrize("scheme", ["bearer", "BEARER", "Bearer"])
def test_scheme_name_is_case_insensitive(api: ContractClient, scheme: str) -> None:
    expect.status(api.get("/pets", params={"limit": 1}, authorization=f"{scheme} {{key}}"), 200)
