"""spec/openapi.yaml is valid OpenAPI and says what the interface document says.

The facts are read from the document itself (spec/interface.md, a copy of the shared
interface document), so that the spec, the suite and the document cannot drift apart.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from openapi_spec_validator import validate

from petstore_contract.interface import spec as spec_module
from petstore_contract.interface.spec import load_spec, spec_path

ROOT = Path(__file__).resolve().parents[1]
DOCUMENT = ROOT / "spec" / "interface.md"
SHARED = ROOT.parent / "shared" / "interface" / "000_3f17d49358130457.txt"


@pytest.fixture(scope="module")
def document() -> str:
    return DOCUMENT.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def spec() -> dict[str, Any]:
    return load_spec()


def _field_table(document: str, heading: str) -> dict[str, tuple[str, bool]]:
    """{field: (type, required)} from the table under '### <heading>'."""
    section = re.split(rf"^### {heading}\b", document, maxsplit=1, flags=re.M)[1].split("###", 1)[0]
    rows = re.findall(r"^\| `(\w+)` \| ([^|]+) \| (yes|no) \|", section, flags=re.M)
    return {name: (kind.strip(), required == "yes") for name, kind, required in rows}


def _schema(spec: dict[str, Any], name: str) -> dict[str, Any]:
    return spec["components"]["schemas"][name]


def test_spec_is_valid_openapi() -> None:
    validate(load_spec())
    assert spec_path() == ROOT / "spec" / "openapi.yaml"


def test_copy_of_the_document_is_current() -> None:
    if not SHARED.exists():
        pytest.skip(f"the shared interface document is not beside this checkout ({SHARED})")
    assert DOCUMENT.read_bytes() == SHARED.read_bytes(), "spec/interface.md differs from the shared document"


def test_operations_match_the_document(document: str, spec: dict[str, Any]) -> None:
    documented = set(re.findall(r"Method and path: `(GET|POST) (/[^`]+)` \(operation name `(\w+)`\)", document))
    documented.add(("GET", "/store/orders", "listOrders"))  # §4.4 names it without an operation name
    in_spec = {
        (method.upper(), path, op["operationId"]) for path, item in spec["paths"].items() for method, op in item.items()
    }
    assert in_spec == documented


def test_version_servers_and_security(document: str, spec: dict[str, Any]) -> None:
    version = re.search(r"version (\d+\.\d+\.\d+) of its interface", document)
    assert version and spec["info"]["version"] == version.group(1)
    assert all(server["url"].endswith("/v1") for server in spec["servers"]) and len(spec["servers"]) == 2
    assert spec["security"] == [{"bearerAuth": []}]
    assert spec["components"]["securitySchemes"]["bearerAuth"] == {
        **spec["components"]["securitySchemes"]["bearerAuth"],
        "type": "http",
        "scheme": "bearer",
    }
    for item in spec["paths"].values():
        assert all("security" not in op for op in item.values()), "§5.1: every operation needs the key"


def test_limit_bounds_and_default(document: str, spec: dict[str, Any]) -> None:
    low, high, default = map(int, re.search(r"minimum (\d+), maximum (\d+), default (\d+)", document).groups())
    limit = next(p for p in spec["paths"]["/pets"]["get"]["parameters"] if p["name"] == "limit")
    assert (limit["schema"]["minimum"], limit["schema"]["maximum"], limit["schema"]["default"]) == (low, high, default)
    assert limit["schema"]["type"] == "integer" and not limit.get("required", False)


def test_status_enum(document: str, spec: dict[str, Any]) -> None:
    values = re.search(r"Allowed values: ([^\n]+)\.", document).group(1)
    assert _schema(spec, "PetStatus")["enum"] == re.findall(r"`(\w+)`", values)
    status = next(p for p in spec["paths"]["/pets"]["get"]["parameters"] if p["name"] == "status")
    assert status["schema"] == {"$ref": "#/components/schemas/PetStatus"}


@pytest.mark.parametrize(("heading", "schema"), [("NewPet", "NewPet"), ("Pet", "Pet"), ("Error", "Error")])
def test_fields_types_and_required(document: str, spec: dict[str, Any], heading: str, schema: str) -> None:
    fields = _field_table(document, heading)
    if schema == "Pet":  # "A Pet has every field of NewPet plus" id
        fields = {**_field_table(document, "NewPet"), **fields}
    body = _schema(spec, schema)
    assert set(body["properties"]) == set(fields)
    assert set(body["required"]) == {name for name, (_, required) in fields.items() if required}
    for name, (kind, _) in fields.items():
        prop = body["properties"][name]
        if kind.startswith("integer"):
            assert prop["type"] == "integer"
            assert ("int64" in kind) == (prop.get("format") == "int64"), name
        elif kind == "string":
            assert prop["type"] == "string"
        else:
            assert prop == {"$ref": f"#/components/schemas/{kind}"}


def _documented_statuses(document: str) -> dict[str, set[str]]:
    """{operationId: statuses} from each operation's "Responses" table (§4.1-§4.3)."""
    found = {}
    for section in re.split(r"^### ", document, flags=re.M)[1:]:
        name = re.search(r"\(operation name `(\w+)`\)", section)
        table = re.search(r"- Responses:\n\n\| Status \| Body \|\n\|---\|---\|\n((?:\|.*\n)+)", section)
        if name and table:
            found[name.group(1)] = set(re.findall(r"^\| (\d{3}) \|", table.group(1), re.M))
    return found


def _operations(spec: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {op["operationId"]: op for item in spec["paths"].values() for op in item.values()}


# Statuses the spec accepts beyond the document's tables, each because the document is silent on
# how that request is answered (out-of-range query values, malformed ids, orders' parameters).
RELAXATIONS = {
    "listPets": {"400", "422"},
    "createPet": set(),
    "getPet": {"400", "422"},
    "listOrders": {"4XX"},
}


def test_documented_statuses_are_declared(document: str, spec: dict[str, Any]) -> None:
    documented = _documented_statuses(document)
    assert set(documented) == {"listPets", "createPet", "getPet"}, "§4.4 shows no table for listOrders"
    documented["listOrders"] = {"200", "401"}  # §4.4 "payloads: not shown"; §5.3: 401 on every operation
    operations = _operations(spec)
    for name, statuses in documented.items():
        declared = set(operations[name]["responses"])
        assert statuses <= declared, f"{name}: the document's {sorted(statuses - declared)} are not declared"
        assert declared - statuses == RELAXATIONS[name], f"{name}: undocumented {sorted(declared - statuses)}"


def test_relaxations_answer_with_an_error_body_and_say_why(spec: dict[str, Any]) -> None:
    """A status the document does not list is a 4xx Error, and a comment in the spec says why it is allowed."""
    text = spec_path().read_text(encoding="utf-8")
    operations = _operations(spec)
    bad_request = spec["components"]["responses"]["BadRequest"]
    assert bad_request["content"] == {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    for name, extras in RELAXATIONS.items():
        responses = operations[name]["responses"]
        for status in extras:
            assert responses[status] == {"$ref": "#/components/responses/BadRequest"}, (name, status)
        # The operation's text: from its operationId (an operation's own, not a link's) to the next one's.
        block = re.split(rf"^ {{6}}operationId: {name}$", text, flags=re.M)[1]
        block = re.split(r"^ {6}operationId:", block, flags=re.M)[0].split("\n      responses:\n", 1)[1]
        entries = re.split(r'^ {8}"(\w+)":\n', block, flags=re.M)
        comments = {
            status: any(line.strip().startswith("#") for line in body.splitlines())
            for status, body in zip(entries[1::2], entries[2::2], strict=True)
        }
        for status in extras:
            # An entry explains itself, or follows the commented relaxation it shares a reason with.
            before = list(comments)[list(comments).index(status) - 1]
            assert comments[status] or (before in extras and comments[before]), f"{name} {status}: no comment"
    orders = operations["listOrders"]
    assert "parameters" not in orders, "§4.4: the parameters of GET /store/orders are not shown"
    assert orders["responses"]["200"]["content"]["application/json"]["schema"] == {}, "§4.4: payload not shown"


def test_deprecation_and_link(document: str, spec: dict[str, Any]) -> None:
    assert "removed on 5 December 2030" in document
    get_pet = spec["paths"]["/pets/{petId}"]["get"]
    assert get_pet["deprecated"] is True
    assert {"Deprecation", "Sunset"} <= set(get_pet["responses"]["200"]["headers"])
    assert "5 December 2030" in get_pet["summary"]
    others = [op for p, item in spec["paths"].items() for op in item.values() if op is not get_pet]
    assert not any(op.get("deprecated") for op in others), "§9.4: the other operations carry no marking"
    link = spec["paths"]["/pets"]["post"]["responses"]["201"]["links"]["GetCreatedPet"]
    assert link == {**link, "operationId": "getPet", "parameters": {"petId": "$response.body#/id"}}
    pet_id = get_pet["parameters"][0]
    assert pet_id["in"] == "path" and pet_id["required"] and pet_id["schema"]["format"] == "int64"


def test_create_body_is_required_json(spec: dict[str, Any]) -> None:
    body = spec["paths"]["/pets"]["post"]["requestBody"]
    assert body["required"] is True
    assert body["content"] == {"application/json": {"schema": {"$ref": "#/components/schemas/NewPet"}}}


# Pairs Python calls equal (or hashes alike) that JSON Schema tells apart, and values too long to keep.
KEPT_VERDICT_CASES = [
    ({"id": 1, "name": "Rex"}, {"id": True, "name": "Rex"}),
    ({"id": 1, "name": "Rex"}, {"id": 1.0, "name": "Rex"}),
    ({"id": 1, "name": "Rex", "categoryId": 0}, {"id": 1, "name": "Rex", "categoryId": False}),
    ({"id": 1, "name": "Rex", "categoryId": 0.0}, {"id": 1, "name": "Rex", "categoryId": -0.0}),
    ({"id": 1, "name": "1.0"}, {"id": 1, "name": 1.0}),
    ({"id": 1, "name": "Rex", "status": None}, {"id": 1, "name": "Rex", "status": "None"}),
    ({"id": 1, "name": "H" * 1_000_000}, {"id": 1, "name": "H" * 1_000_000, "status": "lost"}),
    ({"id": 2**63 - 1, "name": "Rex"}, {"id": 2**63, "name": "Rex"}),
]


@pytest.mark.parametrize(("first", "second"), KEPT_VERDICT_CASES)
def test_kept_verdicts_tell_json_values_apart(first: dict[str, Any], second: dict[str, Any]) -> None:
    """A verdict kept for one object (``schema_errors``' cache) is never given to another JSON value."""
    for instance in (first, second, first, second):  # asked twice: the second answer is the kept one
        assert spec_module.schema_errors("Pet", instance) == spec_module._schema_errors("Pet", instance)
    assert spec_module._flat_key(first)[0] != spec_module._flat_key(second)[0]
