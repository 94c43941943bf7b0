"""Round 4's catalog: Pet Stores in Go, PHP, Ruby and Perl, compliant ones and faulty copies.

Every entry has ``name``, ``kind`` ("fault" or "compliant"), ``quote`` (a compliant server: the silences
its choices fill; a fault: the sentence it breaks), ``description``, ``store`` ("empty" or "crowded": the
store its self-proof uses; the scorer runs a compliant server on both), ``language`` (the folder of its
server) and ``flags`` (the server's switches, each grep-able in its source). A compliant entry lists its
``choices``: the status it answers each silent-area probe of ``probes.py``. A fault names its ``clause``
(the registry's, ``src/petstore_contract/interface/clauses.toml``), its ``base`` (the compliant entry it
is a copy of) and its ``probe`` (``probes.FAULTS``: fails on the fault, passes on the base).
"""

from __future__ import annotations

from typing import Any

CROWDED_PRELOAD = 150

S_HTTP = (
    "Where the document is silent (§4.4 other operations not shown; §1 names only application/json; "
    "§3 the value of an omitted status not shown; §4.1 the answer to a limit outside 1..100 not shown), "
    "HTTP's semantics (RFC 9110 §15.5) pick the status; §7 still asks the Error body."
)
Q_REQUIRED = '§4.2: "`name` and `categoryId` are required." (RFC 8259 §8.3: member names compare exactly)'
Q_TYPES = '§7: "400 | The request body is missing required fields or contains invalid values." (§2: categoryId int64)'
Q_STATUS = '§2: "PetStatus (enumerated string) Allowed values: `available`, `pending`, `sold`."'
Q_ID = '§2: "`id` | integer, format int64 | yes | Unique identifier, assigned by the service on creation."'
Q_PETID = (
    '§4.3: "Path parameter `petId`: integer, format int64, required. It is the identifier of the animal to retrieve."'
)
Q_ERROR = '§7: "All error responses use the Error body (`code`, `message`, `status`; all required)."'
Q_AUTH = '§5.2: "in the form `Authorization: Bearer <API_KEY>`" (RFC 9110 §5.1: field names are case-insensitive)'
Q_NOTHING = '§4.2: "400 | Error (body missing required fields or containing invalid values)." (refused: nothing made)'
Q_RESPONSES = "§4.1, §4.2: the Responses tables (200/201, 400, 401) hold no 3xx for `GET /pets` and `POST /pets`."
Q_JSON = '§4.2: "Request body (required, `application/json`): NewPet." / §7: 400 for invalid values'


def compliant(name: str, language: str, description: str, choices: dict[str, int], flags: list[str]) -> dict[str, Any]:
    entry = {"name": name, "kind": "compliant", "quote": S_HTTP, "description": description, "store": "crowded"}
    return entry | {"language": language, "flags": flags, "choices": choices}


def fault(name: str, base: str, flag: str, clause: str, quote: str, probe: str, description: str) -> dict[str, Any]:
    parent = BY_NAME[base]
    entry = {"name": name, "kind": "fault", "quote": quote, "description": description, "store": "empty"}
    entry |= {"language": parent["language"], "flags": [*parent["flags"], flag]}
    return entry | {"clause": clause, "probe": probe, "base": base}


# The silent-area probes (probes.SILENT), by the status each server answers. Every 4xx carries the Error body.
PLAIN = {"malformed_id_no_key": 401, "malformed_id": 404, "text_body": 201, "delete": 405, "limit_zero": 400}
# In catalog order tier 1 takes the first entry on both stores and the last compliant one (selftests/tiers.py):
# Go's, which start fastest.
COMPLIANT = [
    compliant(
        "go",
        "go",
        "Go net/http, standard library: a ServeMux, the key checked first, the body decoded into "
        "map[string]json.RawMessage and each member checked by its exact name; ids from 1, lists by id.",
        PLAIN | {"trailing_slash": 404},
        [],
    ),
    compliant(
        "php",
        "php",
        "PHP 8.2's built-in server with a router script; animals in a JSON file under flock; "
        "$_SERVER['HTTP_AUTHORIZATION'], json_decode to objects, is_int and strict in_array; filter_var ids.",
        PLAIN | {"trailing_slash": 404},
        [],
    ),
    compliant(
        "ruby",
        "ruby",
        "Sinatra 3 on WEBrick: the key in a before filter, routes with a digits-only petId, "
        "Sinatra's 404 (no route) for other methods, with the Error body through not_found and error handlers.",
        PLAIN | {"delete": 404, "trailing_slash": 404},
        [],
    ),
    compliant(
        "perl",
        "perl",
        "Mojolicious::Lite (daemon, production mode): the key in an under route, a petId "
        "placeholder restricted to digits (404 before the key otherwise), JSON types read from Perl's flags.",
        PLAIN | {"malformed_id_no_key": 404, "trailing_slash": 200},
        [],
    ),
    compliant(
        "perl_deprecation_param",
        "perl",
        "The Mojolicious server whose Deprecation carries a structured-field "
        'parameter, @1751328000;reason="use GET /pets" (RFC 9651 §3.1.2: an Item with parameters is the Date); '
        "an omitted status stored as available; limit clamped into 1..100.",
        PLAIN | {"malformed_id_no_key": 404, "limit_zero": 200, "trailing_slash": 200},
        ["deprecation_param", "clamp_limit"],
    ),
    compliant(
        "php_cap_50",
        "php",
        "The PHP server serving at most 50 animals a page (§4.1: limit is a maximum), "
        "newest first, an omitted status stored as available.",
        PLAIN | {"trailing_slash": 404},
        ["page_cap_50"],
    ),
    compliant(
        "php_strict_media",
        "php",
        "The PHP server with 415 for a body not sent as application/json and 404 "
        "before the key for a petId that is no integer (a path no route serves, RFC 9110 §15.5.5).",
        PLAIN | {"malformed_id_no_key": 404, "text_body": 415, "trailing_slash": 404},
        ["strict_media_type"],
    ),
    compliant(
        "ruby_slash_redirect",
        "ruby",
        "The Sinatra server redirecting an undescribed path with a trailing "
        "slash (GET /v1/pets/) with 308 to /v1/pets (RFC 9110 §15.4.9), 422 for a limit outside 1..100.",
        PLAIN | {"delete": 404, "limit_zero": 422, "trailing_slash": 308},
        ["slash_redirect", "query_422"],
    ),
    compliant(
        "go_typed_422",
        "go",
        "The Go server with typed answers: 422 for a limit or status outside the "
        "document's values (RFC 9110 §15.5.21), 415 for a body not sent as application/json, an omitted "
        "status stored as available.",
        PLAIN | {"text_body": 415, "limit_zero": 422, "trailing_slash": 404},
        ["typed_422"],
    ),
    compliant(
        "go_random_ids",
        "go",
        "The Go server with random int64 ids (above 2^53 most of the time), lists "
        "newest first, a repeated member name refused with 400 (RFC 8259 §4: names SHOULD be unique).",
        PLAIN | {"trailing_slash": 404},
        ["random_ids", "duplicate_keys_refused"],
    ),
]
BY_NAME = {entry["name"]: entry for entry in COMPLIANT}

FAULTS = [
    fault(
        "go_parseint_base0",
        "go",
        "parseint_base0",
        "read.not-found",
        Q_PETID,
        "petid_spellings",
        "strconv.ParseInt(s, 0, 64): 0x1f, 0o17, 0b11, 1_0 and 012 (octal) are read as ids.",
    ),
    fault(
        "go_struct_decode",
        "go",
        "struct_decode",
        "create.reject.required",
        Q_REQUIRED,
        "member_case",
        "The NewPet decoded into a typed struct: encoding/json matches Name, NAME or CategoryID to the "
        "tagged names, so a body without `name` is created.",
    ),
    fault(
        "go_id_kept",
        "go",
        "id_kept",
        "create.id.assigned",
        Q_ID,
        "client_id_kept",
        "The body decoded into the Pet and an id assigned only when it is zero: a client's id is kept, and "
        "an existing animal's id replaces that animal.",
    ),
    fault(
        "go_validate_first_key",
        "go",
        "validate_first_key",
        "create.reject.types",
        Q_TYPES,
        "repeated_key",
        "A validator that walks the tokens and checks a member's first value, while the store keeps "
        'json.Unmarshal\'s last: {"categoryId": 7, "categoryId": "x"} is stored with "x".',
    ),
    fault(
        "go_subtree_redirect",
        "go",
        "subtree_redirect",
        "responses.documented",
        Q_RESPONSES,
        "collection_redirect",
        "Only the subtree /v1/pets/ registered: ServeMux answers GET and POST /v1/pets with its 301 to /v1/pets/.",
    ),
    fault(
        "go_plain_404",
        "go",
        "plain_404",
        "errors.body",
        Q_ERROR,
        "error_page",
        "http.NotFound for a petId that does not parse: net/http's text/plain '404 page not found'.",
    ),
    fault(
        "php_loose_status",
        "php",
        "loose_status",
        "create.reject.status",
        Q_STATUS,
        "status_types",
        "isset() and a loose in_array(): a null status is skipped and `true` equals every non-empty string.",
    ),
    fault(
        "php_header_case",
        "php",
        "header_case",
        "auth.accepted",
        Q_AUTH,
        "lowercase_authorization",
        "getallheaders()['Authorization']: the names keep the client's case, so `authorization: Bearer <key>` "
        "is refused with 401.",
    ),
    fault(
        "php_hex_octal_ids",
        "php",
        "hex_octal_ids",
        "read.not-found",
        Q_PETID,
        "petid_spellings",
        "filter_var(FILTER_VALIDATE_INT) with FILTER_FLAG_ALLOW_HEX | FILTER_FLAG_ALLOW_OCTAL: 0x1f, 012, 0o12.",
    ),
    fault(
        "php_numeric_category",
        "php",
        "numeric_category",
        "create.reject.types",
        Q_TYPES,
        "category_types",
        'is_numeric() and an (int) cast: categoryId 7.5, "12" and true... 7.5 and "12" are created.',
    ),
    fault(
        "php_builtin_404",
        "php",
        "builtin_404",
        "errors.body",
        Q_ERROR,
        "error_page",
        "No fallback route: `return false` gives the request to the built-in server, whose 404 is HTML.",
    ),
    fault(
        "php_status_after_insert",
        "php",
        "status_after_insert",
        "create.reject.nothing-created",
        Q_NOTHING,
        "refused_keeps_nothing",
        "The row inserted first, its status set by a later validating step: a bad "
        "status answers 400 and the animal stays, without a status.",
    ),
    fault(
        "ruby_integer_petid",
        "ruby",
        "integer_petid",
        "read.not-found",
        Q_PETID,
        "petid_spellings",
        "A catch-all :id route and Kernel#Integer: 0x1f, 0b11, 0o17, 1_0 and 012 (octal) are ids.",
    ),
    fault(
        "ruby_html_404",
        "ruby",
        "html_404",
        "errors.body",
        Q_ERROR,
        "error_page",
        "No not_found handler: Sinatra's own HTML 404 page for a path no route matches.",
    ),
    fault(
        "ruby_slash_308",
        "ruby",
        "slash_308",
        "responses.documented",
        Q_RESPONSES,
        "collection_redirect",
        "Routes declared with a trailing slash and a before filter that answers /v1/pets with 308 to /v1/pets/.",
    ),
    fault(
        "ruby_merge_id",
        "ruby",
        "merge_id",
        "create.id.assigned",
        Q_ID,
        "client_id_kept",
        "{'id' => next_id}.merge(body): the body's id overrides the assigned one.",
    ),
    fault(
        "ruby_invalid_json_500",
        "ruby",
        "json_500",
        "create.reject.json",
        Q_JSON,
        "invalid_json",
        "JSON::ParserError not rescued: Sinatra's 500 page for a body that is not JSON.",
    ),
    fault(
        "ruby_parser_message_500",
        "ruby",
        "quote_parser_error",
        "create.reject.json",
        Q_JSON,
        "invalid_json",
        "No UTF-8 check (the parser is left to refuse bad bytes) and the 400's message quotes "
        "JSON::ParserError's excerpt of the body: bytes that are not UTF-8 make JSON.generate fail on the "
        "Error body itself, a 500.",
    ),
    fault(
        "ruby_utf8_500",
        "ruby",
        "utf8_unchecked",
        "create.reject.json",
        Q_JSON,
        "invalid_utf8",
        "No UTF-8 check: JSON.parse copies the byte 0xFF into the name, JSON.generate refuses it: a 500 "
        "(with the Error body) for a body that is not JSON text (RFC 8259 §8.1).",
    ),
    fault(
        "perl_loose_numeric",
        "perl",
        "loose_numeric",
        "read.not-found",
        Q_PETID,
        "letters_after_id",
        "A placeholder without a digits restriction and `$pet->{id} == $id`: 12abc, 12.0 and 1.2e1 are 12.",
    ),
    fault(
        "perl_truthy_status",
        "perl",
        "truthy_status",
        "create.reject.status",
        Q_STATUS,
        "status_types",
        "`if ($body->{status})` guards a string comparison: null (undef) and 0 are never checked, and JSON true "
        "(a JSON::PP::Boolean) compares eq to every status string.",
    ),
    fault(
        "perl_regex_category",
        "perl",
        "regex_category",
        "create.reject.types",
        Q_TYPES,
        "category_types",
        'categoryId checked with /^-?\\d+$/: the string "12" and JSON true (it stringifies as 1) pass.',
    ),
    fault(
        "perl_html_404",
        "perl",
        "html_404",
        "errors.body",
        Q_ERROR,
        "error_page",
        "No before_render hook: Mojolicious's own HTML 'Page not found' for a path no route matches.",
    ),
]

ENTRIES = COMPLIANT + FAULTS
BY_NAME = {entry["name"]: entry for entry in ENTRIES}
