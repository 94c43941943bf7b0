"""Every failure kind and check of the installed Schemathesis has its place in the failure -> clause table.

``generated.failure_clauses()`` places Schemathesis' findings by its stable identities: failure codes
(``Failure.code``, "ST108") and check names (``response_headers_conformance``), never class names or
titles (see generated.py's docstring).  An upgrade that adds a failure code or a check fails here with one
line naming it (a row must say where it lands: a clause, or ``CATCH_ALL`` on purpose); one that retires
or renames a code or a check the table names fails here too, before any finding goes astray.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
import requests
import schemathesis
from schemathesis import GenerationMode
from schemathesis.checks import CHECKS, load_all_checks
from schemathesis.core.failures import Failure
from schemathesis.errors import FailureGroup
from schemathesis.failure_codes import FAILURE_CLASSES

from devtools.catalog import catalog_app
from petstore_contract.judging import custom_checks, generated
from petstore_contract.reference import BackgroundServer

CODE = re.compile(r"ST\d+")


def _subclasses(cls: type[Failure]) -> Iterator[type[Failure]]:
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def defined_failures() -> dict[str, type[Failure]]:
    """Every failure kind the installed Schemathesis defines, by code (its list and every subclass loaded)."""
    load_all_checks()
    return {cls.code: cls for cls in (*FAILURE_CLASSES, *_subclasses(Failure))}


def defined_checks() -> set[str]:
    """Every check it registers, and every check a failure kind says reports it (max_response_time)."""
    load_all_checks()
    return set(CHECKS.get_all_names()) | {check for cls in defined_failures().values() for check in cls.checks}


def table_kinds() -> tuple[set[str], set[str], set[tuple[str, str]]]:
    """The codes, the check names and the (code, check) pairs the table's keys name."""
    codes, checks, pairs = set(), set(), set()
    for _, kind, _ in generated.failure_clauses():
        code, at, check = kind.partition("@")
        if at:
            pairs.add((code, check))
        elif CODE.fullmatch(kind):
            codes.add(kind)
        else:
            checks.add(kind)
    return codes, checks, pairs


VERSION = f"Schemathesis {schemathesis.__version__}"


def test_every_failure_code_is_placed() -> None:
    codes, _, _ = table_kinds()
    missing = {code: cls for code, cls in defined_failures().items() if code not in codes}
    named = ", ".join(
        f"{code} ({cls.kind_title}; checks: {', '.join(cls.checks) or '-'})" for code, cls in missing.items()
    )
    assert not missing, f"{VERSION} defines failure codes generated.failure_clauses() does not place: {named}"


def test_every_check_is_placed() -> None:
    _, checks, _ = table_kinds()
    missing = sorted(defined_checks() - checks)
    assert not missing, f"{VERSION} registers checks generated.failure_clauses() does not place: {', '.join(missing)}"


def test_the_table_names_only_what_schemathesis_defines() -> None:
    failures, checks = defined_failures(), defined_checks()
    codes, named_checks, pairs = table_kinds()
    unknown = sorted(codes - failures.keys()) + sorted(named_checks - checks)
    unknown += [
        f"{code}@{check}" for code, check in sorted(pairs) if check not in getattr(failures.get(code), "checks", ())
    ]
    assert not unknown, f"generated.failure_clauses() names what {VERSION} does not define: {', '.join(unknown)}"


# -- the check that raised a failure, as the run learns it -----------------------------------------

KEY = "failure-codes-key"
AUTH = {"Authorization": f"Bearer {KEY}"}


def _read(fault: str, existing: bool) -> tuple[Any, Any, FailureGroup]:
    """GET /pets/{petId} of a reference server with ``fault``, validated as the run validates it."""
    with BackgroundServer(catalog_app(KEY, fault=fault)) as server:
        pet_id = 123456789
        if existing:
            created = requests.post(
                f"{server.base_url}/pets", json={"name": "Rex", "categoryId": 1}, headers=AUTH, timeout=10
            )
            pet_id = created.json()["id"]
        schema = generated.load_schema(GenerationMode.POSITIVE, seed=1, max_examples=1, read_only=False)
        case = schema["/pets/{petId}"]["GET"].Case(path_parameters={"petId": pet_id}, headers=AUTH)
        response = case.call(base_url=server.base_url)
    with pytest.raises(FailureGroup) as raised:
        case.validate_response(response, additional_checks=custom_checks.CUSTOM_CHECKS)
    return case, response, raised.value


@pytest.mark.parametrize(
    ("fault", "existing", "check", "clause", "expectation"),
    [
        # One code, two checks: a header that breaks its schema, and an Error body that does.
        (
            "read_deprecation_http_date",
            True,
            "response_headers_conformance",
            "read.deprecation",
            "schemathesis:HeaderSchema",
        ),
        ("error_missing_code", False, "response_schema_conformance", "errors.body", "schemathesis:JsonSchemaError"),
    ],
)
def test_a_schema_violation_is_placed_by_the_check_that_raised_it(
    fault: str, existing: bool, check: str, clause: str, expectation: str
) -> None:
    case, response, group = _read(fault, existing)
    violations = [failure for failure in group.exceptions if failure.code == generated.SCHEMA_VIOLATION]
    assert [generated.check_of(failure) for failure in violations] == [check]
    findings = generated.findings_of(group, case, response, lambda text: text, AUTH["Authorization"])
    assert (clause, expectation) in {(finding.clause, finding.expectation) for finding in findings}
