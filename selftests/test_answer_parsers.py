"""Every reader of a target's answer is total: it returns, or raises the suite's Mismatch (a finding on
its clause), whatever the target sends — never another exception, which would end the run as an
error of the suite instead of a verdict on the target.

Hypothesis draws adversarial answers: huge and negative dates, control characters, invalid UTF-8,
duplicate and empty headers, deep nesting, numbers beyond int64 and float range, long bodies.
The judges are data (one table); the property is one loop.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from requests.structures import CaseInsensitiveDict

from petstore_contract.core.records import Exchange, Mismatch, Violation
from petstore_contract.judging import custom_checks, expect, generated, headers
from petstore_contract.judging.expect import Judge
from petstore_contract.transport import Answer

EXCHANGE = Exchange("GET", "http://127.0.0.1:1/v1/pets")
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck), database=None)

# -- adversarial values -------------------------------------------------------------------------------

huge_numbers = st.sampled_from(["1e400", "-1e400", "9" * 5000, "-9223372036854775809", "18446744073709551616", "NaN"])
deep = st.integers(1, 20_000).map(lambda n: "[" * n + "]" * n)
deep_objects = st.integers(1, 20_000).map(lambda n: '{"a":' * n + "1" + "}" * n)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
pet_like = st.fixed_dictionaries(
    {},
    optional={
        "id": st.integers(-(2**80), 2**80) | st.floats() | st.text() | json_values,
        "name": st.text() | json_values,
        "categoryId": st.integers(-(2**80), 2**80) | st.floats() | json_values,
        "status": st.sampled_from(["available", "pending", "sold", "AVAILABLE", ""]) | json_values,
    },
)
bodies = st.one_of(
    st.binary(max_size=300),
    st.sampled_from([b"", b"\xff\xfe\xfd", b"\x00", b"null", b"[]", b"{}", b'"\xed\xa0\x80"']),
    huge_numbers.map(str.encode),
    deep.map(str.encode),
    deep_objects.map(str.encode),
    json_values.map(lambda v: json.dumps(v).encode()),
    st.lists(pet_like, max_size=5).map(lambda v: json.dumps(v).encode()),
    pet_like.map(lambda v: json.dumps(v).encode()),
    st.fixed_dictionaries({}, optional={"code": json_values, "message": json_values, "status": json_values}).map(
        lambda v: json.dumps(v).encode()
    ),
)
dates = st.one_of(
    st.integers(-(10**20), 10**20).map(lambda n: f"@{n}"),
    st.integers(-(10**20), 10**20).map(str),
    st.builds(
        "{}, {:02d} {} {:04d} {:02d}:{:02d}:{:02d} GMT".format,
        st.sampled_from(["Mon", "Thu", "Xyz"]),
        st.integers(0, 99),
        st.sampled_from(["Jan", "Feb", "Dec", "Foo"]),
        st.integers(0, 9999),
        st.integers(0, 99),
        st.integers(0, 99),
        st.integers(0, 99),
    ),
)
header_text = st.one_of(st.text(st.characters(codec="latin-1"), max_size=80), dates)
header_maps = st.dictionaries(
    st.sampled_from(["content-type", "www-authenticate", "deprecation", "sunset", "location", "x-other"]),
    header_text,
    max_size=6,
)


def answer(status: int, head: dict[str, str], body: bytes) -> Answer:
    exchange = Exchange(EXCHANGE.method, EXCHANGE.url, status=status)
    return Answer(status=status, headers=CaseInsensitiveDict(head), body=body, recorded=exchange)


@dataclass
class FakeResponse:
    """What Schemathesis hands a check: header values as lists (a header repeated is two values)."""

    status_code: int
    headers: dict[str, list[str]]
    content: bytes


# -- the judges, as data --------------------------------------------------------------------------

ANSWER_JUDGES: dict[str, Callable[[Answer], Any]] = {
    "body_of": expect.body_of,
    "parse_json": expect.parse_json,
    "status": lambda a: expect.status(a, 200, 201),
    "no_server_error": expect.no_server_error,
    "json_media_type": expect.json_media_type,
    "error_body": expect.error_body,
    "pet_list": expect.pet_list,
    "pet": lambda a: expect.pet(expect.parse_json(a), "the body", a.exchange),
    "same_fields": lambda a: expect.same_fields({"name": "x", "categoryId": 1}, expect.parse_json(a), "it"),
    "bearer_challenge": expect.bearer_challenge,
}
CHECKS = {check.__name__: check for check in custom_checks.CUSTOM_CHECKS}
TEXT_READERS: dict[str, Callable[[str], Any]] = {
    "sf_date_seconds": headers.sf_date_seconds,
    "http_date_seconds": headers.http_date_seconds,
    "challenge_schemes": headers.challenge_schemes,
    "media_type": headers.media_type,
    "short": expect.short,
}


@pytest.mark.parametrize("name", sorted(ANSWER_JUDGES))
@SETTINGS
@given(status=st.integers(100, 599), head=header_maps, body=bodies)
@example(status=200, head={}, body=b"[" * 100_000 + b"]" * 100_000)
@example(status=200, head={"content-type": "application/json"}, body=b"[" + b"1," * 5_000_000 + b"1]")  # 10 MB
def test_answer_judges_return_or_raise_mismatch(name: str, status: int, head: dict[str, str], body: bytes) -> None:
    with contextlib.suppress(Mismatch):
        ANSWER_JUDGES[name](answer(status, head, body))


@pytest.mark.parametrize("name", sorted(CHECKS))
@SETTINGS
@given(status=st.integers(100, 599), head=header_maps, repeated=st.booleans(), body=bodies)
def test_custom_checks_return_or_raise_a_violation(
    name: str, status: int, head: dict[str, str], repeated: bool, body: bytes
) -> None:
    listed = {k: [v, v + " again"] if repeated else [v] for k, v in head.items()}
    case = SimpleNamespace(operation=SimpleNamespace(schema=SimpleNamespace(is_deprecated=lambda _op: True)))
    with contextlib.suppress(Violation):
        CHECKS[name](None, FakeResponse(status, listed, body), case)


@pytest.mark.parametrize("name", sorted(TEXT_READERS))
@SETTINGS
@given(value=header_text | st.text())
def test_header_readers_never_raise(name: str, value: str) -> None:
    TEXT_READERS[name](value)


@SETTINGS
@given(query=st.dictionaries(st.sampled_from(["limit", "status"]), st.text() | json_values, max_size=2))
@example(query={"limit": "²"})  # a digit to str.isdigit, not to int()
@example(query={"limit": "9" * 5000})  # more digits than int() reads
def test_query_clause_places_every_query(query: dict[str, Any]) -> None:
    assert generated.query_clause(query) in ("list.limit.invalid", "list.status.invalid", "responses.documented")


@SETTINGS
@given(body=json_values | pet_like)
def test_rejection_clause_places_every_body(body: Any) -> None:
    assert generated.rejection_clause(body).startswith("create.reject.")


# -- the values that crashed checks once, as regression tests --------------------------------------


def test_deprecation_beyond_datetime_years_is_read_as_seconds() -> None:
    # year 56971: datetime.fromtimestamp raised "year 56971 is out of range" inside the Sunset check
    assert headers.sf_date_seconds("@1735689600000") == 1_735_689_600_000
    assert headers.http_date_seconds("Thu, 05 Dec 2030 00:00:00 GMT") < 1_735_689_600_000


def test_a_deprecation_date_with_parameters_is_still_a_date() -> None:
    # RFC 9651 §3.1.2: parameters on an Item; a Go or PHP service adds a reason to its Deprecation
    assert headers.sf_date_seconds('@1767225600;reason="x"') == 1_767_225_600
    assert headers.sf_date_seconds("@1767225600; a;b=?1;c=tok/x;d=1.5;e=:AA==:") == 1_767_225_600
    assert headers.sf_date_seconds('@1767225600;Reason="x"') is None  # keys are lower case
    assert headers.sf_date_seconds('@1767225600;reason="x') is None  # an unterminated string
    assert headers.sf_date_seconds("@1767225600 ;a") is None


def test_a_day_that_does_not_exist_is_no_http_date() -> None:
    assert headers.http_date_seconds("Sat, 31 Feb 2030 00:00:00 GMT") is None
    assert headers.http_date_seconds("Thu, 05 Dec 0000 00:00:00 GMT") is None
    assert headers.http_date_seconds("Thu, 05 Dec 2030 24:00:00 GMT") is None
    assert headers.day_of(headers.http_date_seconds("Thu, 05 Dec 2030 23:59:59 GMT") or 0) == headers.epoch_day(
        2030, 12, 5
    )


def test_a_basic_challenge_is_a_finding_not_a_crash() -> None:
    refused = answer(401, {"www-authenticate": 'Basic realm="petstore"'}, b"{}")
    with pytest.raises(Mismatch, match="a Bearer challenge"):
        expect.bearer_challenge(refused)
    assert headers.challenge_schemes('Basic realm="a", Bearer realm="b", error="invalid_token"') == ["basic", "bearer"]


@pytest.mark.parametrize(("status", "outcome"), [(429, "undecided"), (500, "violated"), (400, "violated")])
def test_a_429_that_outlasted_its_waits_is_undecided_never_a_violation(status: int, outcome: str) -> None:
    judge = Judge()
    with judge("create.created"):
        expect.status(answer(status, {}, b"{}"), 201)
    assert judge.outcomes == {"create.created": outcome}
    assert [n.kind for n in judge.notes] == (["throttled"] if status == 429 else [])
