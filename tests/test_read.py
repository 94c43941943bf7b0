"""§4.3 Get an animal (deprecated): GET /pets/{petId}, its 404, and the Deprecation/Sunset headers (§9.3)."""

from __future__ import annotations

import email.utils
import re
from datetime import UTC, date, datetime
from typing import Any

import pytest

from petstore_contract import expect
from petstore_contract.client import ContractClient

from .conftest import unknown_pet_id

SUNSET_DAY = date(2030, 12, 5)  # §4.3, §9.3
SF_DATE = re.compile(r"@(-?[0-9]{1,15})")  # RFC 9651 §3.3.7, as RFC 9745 §2.1 requires
IMF_FIXDATE = re.compile(
    r"(Mon|Tue|Wed|Thu|Fri|Sat|Sun), [0-9]{2} [A-Z][a-z]{2} [0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2} GMT"
)
MALFORMED_IDS = ["abc", "1.5", "9223372036854775808", "-9223372036854775809", "%20", "1e3", "0x1F", "null"]


@pytest.mark.clause("read.found")
def test_created_pet_reads_back_exactly(api: ContractClient, known_pet: dict[str, Any]) -> None:
    answer = api.get(f"/pets/{known_pet['id']}")
    expect.status(answer, 200)
    expect.json_media_type(answer)
    pet = expect.pet(answer.json(), "the animal read back")
    expected = {k: known_pet[k] for k in ("id", "name", "categoryId", "status") if k in known_pet}
    expect.same_fields(expected, pet, f"GET /pets/{known_pet['id']}")


@pytest.mark.clause("read.not-found")
def test_unknown_id_is_404_with_error(api: ContractClient) -> None:
    expect.error_body(api.get(f"/pets/{unknown_pet_id(api)}"), 404)


@pytest.mark.clause("responses.documented")
@pytest.mark.parametrize("pet_id", MALFORMED_IDS)
def test_malformed_id_is_never_a_server_error(api: ContractClient, pet_id: str) -> None:
    answer = api.get(f"/pets/{pet_id}")
    expect.no_server_error(answer)
    if answer.status in (400, 404):
        expect.error_body(answer, answer.status)


def _deprecation_seconds(answer: Any) -> int:
    value = answer.headers.get("deprecation")
    assert value is not None, f"no Deprecation header on the deprecated operation's {answer.status} answer"
    match = SF_DATE.fullmatch(value.strip())
    assert match, f"Deprecation must be an sf-date '@<unix seconds>' (RFC 9745 §2.1), got {value!r}"
    return int(match.group(1))


@pytest.mark.clause("read.deprecation")
def test_deprecation_header_is_an_sf_date(api: ContractClient, known_pet: dict[str, Any]) -> None:
    answer = api.get(f"/pets/{known_pet['id']}")
    expect.status(answer, 200)
    _deprecation_seconds(answer)


@pytest.mark.clause("read.sunset")
def test_sunset_names_5_december_2030_after_deprecation(api: ContractClient, known_pet: dict[str, Any]) -> None:
    answer = api.get(f"/pets/{known_pet['id']}")
    expect.status(answer, 200)
    sunset = answer.headers.get("sunset")
    if sunset is None:
        return  # optional (RFC 8594); §9.3's date is then not announced in a header
    assert IMF_FIXDATE.fullmatch(sunset.strip()), f"Sunset must be an IMF-fixdate HTTP-date, got {sunset!r}"
    when = email.utils.parsedate_to_datetime(sunset).astimezone(UTC)
    assert when.date() == SUNSET_DAY, f"Sunset names {when.date()}, the document says {SUNSET_DAY}"
    deprecated = _deprecation_seconds(answer)
    assert when >= datetime.fromtimestamp(deprecated, UTC), (
        f"Sunset {sunset} is earlier than the Deprecation date @{deprecated} (RFC 9745 §4)"
    )
