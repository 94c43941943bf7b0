"""The blind catalog of Pet Store servers: one row per variant, as data.

Written from the interface document alone (/work/shared/interface/...), without
looking at the contract suite. Every fault names the sentence it breaks and
carries a short demonstration: requests plus the properties a correct answer
has. The fault's server must fail at least one property; the base "compliant"
server must pass them all (see test_catalog.py). server.py reads each entry's
`flags` to switch its behaviour, so adding an entry is adding a row here plus,
where needed, one switch in server.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# Stores of this size show the faults marked store="crowded" (over 100 animals,
# so a page of 100 cannot hold them all and the default page of 20 is a real cut).
CROWDED_PRELOAD = 150

ABSENT: Any = object()  # "no JSON body", distinct from a JSON null body
GOOD_AUTH = "Bearer {key}"  # request templates see {key}, {KEY} (upper-cased) and earlier bodies as {0[id]}

Check = tuple[Any, ...]


@dataclass(frozen=True)
class Step:
    """One request of a demonstration and the properties a correct answer has."""

    method: str
    path: str
    expect: tuple[Check, ...] = ()
    auth: str | None = GOOD_AUTH
    body: Any = ABSENT
    raw: bytes | None = None
    content_type: str = "application/json"
    repeat: int = 1


@dataclass(frozen=True)
class Entry:
    name: str
    kind: str  # "fault" or "compliant"
    quote: str
    description: str
    store: str = "any"  # "crowded": run (and shown) on a store of CROWDED_PRELOAD animals
    flags: frozenset[str] = frozenset()
    demo: tuple[Step, ...] = ()


# --- vocabulary for demonstrations (each check names a property of a correct answer) ---
# Demonstrations hold on any store the base server may have built up before (the test run
# shares one base server per store size), so they state bounds ("at least one", "at most 20"),
# never "this exact animal is on the first page".
OK = ("status", 200)
CREATED = ("status", 201)
BAD = ("status", 400)
UNAUTH = ("status", 401)
MISSING = ("status", 404)
ERROR = ("error_body",)
CHALLENGE = ("challenge",)
ARRAY = ("json_array",)
PET = ("pet",)
MEDIA = ("media_json",)
DEPRECATION = ("deprecation_past",)
SUNSET = ("sunset_ok",)
UNKNOWN_ID = "/pets/987654321"
REX = {"name": "Rex", "categoryId": 1}


def get(path: str, *expect: Check, auth: str | None = GOOD_AUTH, repeat: int = 1) -> Step:
    return Step("GET", path, expect, auth=auth, repeat=repeat)


def post(body: Any, *expect: Check, auth: str | None = GOOD_AUTH, repeat: int = 1) -> Step:
    return Step("POST", "/pets", expect, auth=auth, body=body, repeat=repeat)


def post_raw(raw: bytes, *expect: Check, content_type: str = "application/json") -> Step:
    return Step("POST", "/pets", expect, raw=raw, content_type=content_type)


def create(name: str = "Rex", status: str | None = None, category: int = 1, repeat: int = 1) -> Step:
    """A valid create; the base answers 201 with a Pet."""
    body: dict[str, Any] = {"name": name, "categoryId": category}
    if status is not None:
        body["status"] = status
    return post(body, CREATED, PET, repeat=repeat)


def echo(field_name: str, value: Any, body: dict[str, Any]) -> tuple[Step, ...]:
    """Create with `body`; a correct answer echoes `value` in `field_name`."""
    return (post(body, CREATED, ("field", field_name, value)),)


def rejected(body: Any) -> tuple[Step, ...]:
    """A create body the document calls invalid: a correct answer is 400 with an Error body."""
    return (post(body, BAD, ERROR),)


def read_back(*expect: Check) -> tuple[Step, ...]:
    """Create one animal, then read it by id (the deprecated operation)."""
    return (create(), get("/pets/{0[id]}", *expect))


def fault(name: str, quote: str, description: str, demo: tuple[Step, ...], **extra: Any) -> Entry:
    flags = extra.pop("flags", {name})
    return Entry(name, "fault", quote, description, flags=frozenset(flags), demo=demo, **extra)


def compliant(name: str, quote: str, description: str, flags: set[str] | None = None) -> Entry:
    return Entry(name, "compliant", quote, description, flags=frozenset(flags if flags is not None else {name}))


# --- quotes: the document's sentences (section numbers as in the document) and RFC sentences ---
Q_AUTH_401 = "§5.3: When the key is missing or invalid, the service answers 401 with an Error body."
Q_AUTH_FORM = (
    "§5.2: The client sends the API key as a bearer token in the `Authorization` header, "
    "in the form `Authorization: Bearer <API_KEY>`."
)
Q_AUTH_ALL = "§4: All three operations require the bearer credential described under Authentication."
Q_AUTH_EVERY = "§5.1: Every operation requires HTTP bearer authentication."
Q_CHALLENGE = (
    "RFC 9110 §11.6.1: A server generating a 401 (Unauthorized) response MUST send a WWW-Authenticate "
    "header field containing at least one challenge."
)
Q_BEARER_CHALLENGE = (
    'RFC 6750 §3: All challenges defined by this specification MUST use the auth-scheme value "Bearer".'
)
Q_SCHEME_CASE = "RFC 9110 §11.1: It uses a case-insensitive token to identify the authentication scheme"
Q_ERROR = (
    "§7: All error responses use the Error body (`code`, `message`, `status`; all required). "
    "`status` repeats the HTTP status code."
)
Q_ERROR_TYPES = (
    "§2 Error: `code` | string | yes; `message` | string | yes; `status` | integer | yes | The HTTP status code."
)
Q_JSON = "§1: Request and response bodies are JSON (`application/json`)."
Q_UTF8 = (
    "§1: Request and response bodies are JSON (`application/json`). RFC 8259 §8.1: JSON text exchanged "
    "between systems that are not part of a closed ecosystem MUST be encoded using UTF-8."
)
Q_LIMIT = "§4.1 / §8: `limit` | integer | no | minimum 1, maximum 100, default 20 | Maximum number of animals returned."
Q_LIST_200 = "§4.1: Responses: 200 | JSON array of Pet. (The only other listed answer is 401.)"
Q_LIST_ARRAY = "§2: A list of animals is a JSON array of Pet."
Q_FILTER = "§4.1: `status` | PetStatus | no | one of `available`, `pending`, `sold` | Filters by availability status."
Q_CREATED = "§4.2: 201 | Pet (the created animal, including the assigned `id`)."
Q_NEWPET = "§2: A Pet has every field of NewPet plus `id`; NewPet: `name` | string | yes | The animal's name."
Q_CATEGORY = "§2 NewPet: `categoryId` | integer, format int64 | yes | Identifier of the category the animal belongs to."
Q_STATUS_ENUM = "§2 PetStatus: Allowed values: `available`, `pending`, `sold`."
Q_REQUIRED = "§4.2: Request body (required, `application/json`): NewPet. `name` and `categoryId` are required."
Q_400 = "§4.2: 400 | Error (body missing required fields or containing invalid values)."
Q_ID = "§2 Pet: `id` | integer, format int64 | yes | Unique identifier, assigned by the service on creation."
Q_GET = "§4.3: Path parameter `petId` ... It is the identifier of the animal to retrieve. Responses: 200 | Pet."
Q_404 = "§7: 404 | The requested animal cannot be found. | `GET /pets/{petId}`"
Q_DEPRECATED = (
    "§4.3: The operation is marked deprecated and is to be removed on 5 December 2030. RFC 9745 §2.1: "
    "the Deprecation header field's value MUST be a Date (Structured Fields sf-date, `@<seconds>`)."
)
Q_DEPRECATED_SINCE = (
    "§4.3: The operation is marked deprecated. RFC 9745 §2.1: it conveys the deprecation date, which may be "
    "in the future (the resource context will be deprecated at that date) or in the past (the resource "
    "context has been deprecated at that date)."
)
Q_SUNSET = "§9.3: `GET /pets/{petId}` is deprecated and is removed on 5 December 2030. RFC 8594 §3: Sunset = HTTP-date."
Q_REPLACEMENT = "§4.3: The replacement is `GET /pets` with the `status` filter."
Q_ORDERS = "§4.4: `GET /store/orders` exists."

FAULTS: tuple[Entry, ...] = (
    # --- authentication ---
    fault(
        "auth_any_token",
        Q_AUTH_401,
        "accepts any non-empty bearer token, not only the configured key",
        (get("/pets", UNAUTH, ERROR, CHALLENGE, auth="Bearer not-the-key"),),
    ),
    fault(
        "auth_trailing_garbage",
        Q_AUTH_401,
        "compares only the first len(key) characters: the key followed by junk is accepted",
        (get("/pets", UNAUTH, ERROR, auth="Bearer {key}x"),),
    ),
    fault(
        "auth_query_key",
        Q_AUTH_FORM,
        "accepts the key as an `api_key` query parameter without any Authorization header",
        (get("/pets?api_key={key}", UNAUTH, ERROR, auth=None),),
    ),
    fault(
        "auth_any_scheme",
        Q_AUTH_EVERY,
        "checks only the credentials, so `Token <key>` (not bearer) is accepted",
        (get("/pets", UNAUTH, ERROR, auth="Token {key}"),),
    ),
    fault(
        "auth_no_challenge",
        Q_CHALLENGE,
        "401 answers carry no WWW-Authenticate header",
        (get("/pets", UNAUTH, CHALLENGE, auth=None),),
    ),
    fault(
        "auth_basic_challenge",
        Q_BEARER_CHALLENGE,
        'the 401 challenge is `Basic realm="petstore"` instead of a Bearer challenge',
        (get("/pets", UNAUTH, CHALLENGE, auth=None),),
    ),
    fault(
        "auth_403_wrong_key",
        Q_AUTH_401,
        "a wrong key gets 403 Forbidden (a missing key still gets 401)",
        (get("/pets", UNAUTH, ERROR, auth="Bearer wrong-key"),),
    ),
    fault(
        "auth_getpet_open",
        Q_AUTH_ALL,
        "GET /pets/{petId} answers without any credential",
        (create(), get("/pets/{0[id]}", UNAUTH, ERROR, auth=None)),
    ),
    fault(
        "auth_create_open",
        Q_AUTH_ALL,
        "POST /pets creates animals without any credential",
        (post(REX, UNAUTH, ERROR, auth=None),),
    ),
    fault(
        "auth_orders_open",
        Q_AUTH_EVERY,
        "GET /store/orders answers without any credential",
        (get("/store/orders", UNAUTH, ERROR, auth=None),),
    ),
    fault(
        "auth_scheme_case_sensitive",
        Q_SCHEME_CASE,
        "only the exact spelling `Bearer` is accepted: `bearer <key>` gets 401",
        (get("/pets", OK, ARRAY, auth="bearer {key}"),),
    ),
    fault(
        "auth_key_case_insensitive",
        Q_AUTH_401,
        "compares the key case-insensitively, so the upper-cased key is accepted",
        (get("/pets", UNAUTH, ERROR, auth="Bearer {KEY}"),),
    ),
    fault(
        "auth_validation_first",
        Q_AUTH_401,
        "POST /pets validates the body before the credential: no key and an empty body gets 400, not 401",
        (post({}, UNAUTH, ERROR, auth=None),),
    ),
    fault(
        "auth_intermittent_bypass",
        Q_AUTH_401,
        "every 5th request without a credential is served as if it had the key",
        (get("/pets", UNAUTH, auth=None, repeat=6),),
    ),
    fault(
        "auth_401_empty_body",
        Q_AUTH_401,
        "401 answers have an empty body (no Error)",
        (get("/pets", UNAUTH, ERROR, MEDIA, auth=None),),
    ),
    # --- limit and pages ---
    fault(
        "limit_100_rejected",
        Q_LIMIT,
        "treats the maximum as exclusive: limit=100 gets 400",
        (get("/pets?limit=100", OK, ARRAY),),
    ),
    fault(
        "limit_1_rejected",
        Q_LIMIT,
        "treats the minimum as exclusive: limit=1 gets 400",
        (create(), get("/pets?limit=1", OK, ("len_le", 1))),
    ),
    fault(
        "limit_off_by_one",
        Q_LIMIT,
        "returns limit+1 animals when the store has enough",
        (create(repeat=3), get("/pets?limit=2", OK, ("len_le", 2))),
    ),
    fault(
        "default_limit_50",
        Q_LIMIT,
        "without `limit` returns up to 50 animals instead of 20",
        (get("/pets", OK, ("len_le", 20)),),
        store="crowded",
    ),
    fault(
        "limit_ignored",
        Q_LIMIT,
        "ignores the `limit` parameter and always returns up to 20 animals",
        (create(repeat=7), get("/pets?limit=5", OK, ("len_le", 5))),
    ),
    fault(
        "limit_above_100_honoured",
        Q_LIMIT,
        "accepts limit=150 and returns 150 animals",
        (get("/pets?limit=150", ("len_le_if_ok", 100), ("error_if_failed",)),),
        store="crowded",
    ),
    fault(
        "limit_zero_unlimited",
        Q_LIMIT,
        "limit=0 means 'no limit' and returns the whole store",
        (get("/pets?limit=0", ("len_le_if_ok", 100), ("error_if_failed",)),),
        store="crowded",
    ),
    fault(
        "limit_text_crash",
        Q_ERROR,
        "a non-numeric limit crashes the handler: 500 with an HTML traceback page",
        (get("/pets?limit=ten", ("error_if_failed",), MEDIA),),
    ),
    fault(
        "page_duplicate",
        Q_LIST_ARRAY + " " + Q_ID,
        "once the store holds more than 50 animals, the last animal of a page is a repeat of the one before",
        (get("/pets?limit=40", OK, ("unique_ids",)),),
        store="crowded",
    ),
    # --- status filter ---
    fault(
        "filter_ignored",
        Q_FILTER,
        "ignores the status filter",
        (
            create("Ada", "sold"),
            create("Bob", "available"),
            get("/pets?status=sold&limit=100", OK, ("all_status", "sold")),
        ),
    ),
    fault(
        "filter_leaks_sold",
        Q_FILTER,
        "status=pending also returns sold animals",
        (
            create("Cid", "pending"),
            create("Dot", "sold"),
            get("/pets?status=pending&limit=100", OK, ("all_status", "pending")),
        ),
    ),
    fault(
        "filter_drops_sold",
        Q_FILTER,
        "status=sold always answers an empty page, even when sold animals exist",
        (create("Eve", "sold"), get("/pets?status=sold&limit=100", OK, ("len_ge", 1))),
    ),
    fault(
        "crowded_filter_leak",
        Q_FILTER,
        "the filter only looks at the first 60 animals of the store; later ones leak through whatever their status",
        (get("/pets?status=pending&limit=100", OK, ("all_status", "pending")),),
        store="crowded",
    ),
    # --- create: status codes, validation holes ---
    fault("create_200", Q_CREATED, "a successful create answers 200 instead of 201", (post(REX, CREATED, PET),)),
    fault(
        "create_422",
        Q_400,
        "an invalid create body gets 422 instead of 400",
        rejected({}),
    ),
    fault(
        "name_missing_accepted",
        Q_REQUIRED,
        "a body without `name` is accepted (name becomes an empty string)",
        rejected({"categoryId": 1}),
    ),
    fault(
        "categoryid_missing_accepted",
        Q_REQUIRED,
        "a body without `categoryId` is accepted (categoryId becomes 0)",
        rejected({"name": "Rex"}),
    ),
    fault(
        "name_null_accepted",
        Q_NEWPET,
        "`name: null` is accepted and stored as null",
        rejected({"name": None, "categoryId": 1}),
    ),
    fault(
        "name_number_coerced",
        Q_NEWPET,
        "a numeric `name` is accepted and turned into a string",
        rejected({"name": 123, "categoryId": 1}),
    ),
    fault(
        "categoryid_string_coerced",
        Q_CATEGORY,
        'a numeric string `categoryId` ("12") is accepted and turned into an integer',
        rejected({"name": "Rex", "categoryId": "12"}),
    ),
    fault(
        "categoryid_bool_accepted",
        Q_CATEGORY,
        "`categoryId: true` is accepted as 1 (a boolean is not an integer in JSON)",
        rejected({"name": "Rex", "categoryId": True}),
    ),
    fault(
        "categoryid_float_truncated",
        Q_CATEGORY,
        "`categoryId: 2.5` is accepted and truncated to 2",
        rejected({"name": "Rex", "categoryId": 2.5}),
    ),
    fault(
        "categoryid_out_of_int64_accepted",
        Q_CATEGORY,
        "a categoryId of 2^63 (outside int64) is accepted and echoed",
        rejected({"name": "Rex", "categoryId": 2**63}),
    ),
    fault(
        "status_unknown_accepted",
        Q_STATUS_ENUM,
        "any string is accepted as `status` (e.g. 'adopted') and echoed",
        rejected({"name": "Rex", "categoryId": 1, "status": "adopted"}),
    ),
    fault(
        "status_case_folded",
        Q_STATUS_ENUM,
        "status 'SOLD' is accepted and folded to 'sold'",
        rejected({"name": "Rex", "categoryId": 1, "status": "SOLD"}),
    ),
    fault(
        "photo_urls_required",
        Q_REQUIRED,
        "refuses a valid NewPet unless it also carries a `photoUrls` array (a field the document does not have)",
        (post(REX, CREATED, PET),),
    ),
    fault(
        "body_form_accepted",
        Q_REQUIRED,
        "a form-encoded body (name=Rex&categoryId=1) is parsed and creates an animal",
        (post_raw(b"name=Rex&categoryId=1", BAD, ERROR, content_type="application/x-www-form-urlencoded"),),
    ),
    fault(
        "body_array_crash",
        Q_ERROR,
        "a JSON array as body crashes the handler: 500 with an HTML page",
        (post_raw(b"[1, 2]", BAD, ERROR),),
    ),
    fault(
        "body_bad_json_hangup",
        Q_400,
        "a body that is not valid JSON gets no answer: the connection is closed",
        (post_raw(b'{"name": "Rex",', BAD, ERROR),),
    ),
    # --- create: what is echoed and stored ---
    fault(
        "name_trimmed",
        Q_NEWPET,
        "names are stripped of surrounding spaces",
        echo("name", "  Rex  ", {"name": "  Rex  ", "categoryId": 1}),
    ),
    fault(
        "name_astral_dropped",
        Q_NEWPET,
        "characters outside the Basic Multilingual Plane (emoji) are removed from names",
        echo("name", "Rex \U0001f415", {"name": "Rex \U0001f415", "categoryId": 1}),
    ),
    fault(
        "name_nfc_normalized",
        Q_NEWPET,
        "names are Unicode-normalised to NFC, so a decomposed 'é' comes back composed",
        echo("name", "Zoe\u0301", {"name": "Zoe\u0301", "categoryId": 1}),
    ),
    fault(
        "name_html_escaped",
        Q_NEWPET,
        "names are HTML-escaped ('<' becomes '&lt;')",
        echo("name", "<Tom & Jerry>", {"name": "<Tom & Jerry>", "categoryId": 1}),
    ),
    fault(
        "name_truncated_32",
        Q_NEWPET,
        "names longer than 32 characters are silently cut to 32 (and 201 is answered)",
        echo("name", "N" * 40, {"name": "N" * 40, "categoryId": 1}),
    ),
    fault(
        "latin1_body",
        Q_UTF8,
        "response bodies are encoded in Latin-1, so a name like 'Zoë' is not valid UTF-8 on the wire",
        (post({"name": "Zoë", "categoryId": 1}, CREATED, ("json",), ("field", "name", "Zoë")),),
    ),
    fault(
        "categoryid_float_rounding",
        Q_CATEGORY,
        "categoryId goes through a float: 2^53+1 comes back as 2^53",
        echo("categoryId", 2**53 + 1, {"name": "Rex", "categoryId": 2**53 + 1}),
    ),
    fault(
        "categoryid_int32_wrap",
        Q_CATEGORY,
        "categoryId is stored as a 32-bit integer: 3000000000 comes back negative",
        echo("categoryId", 3_000_000_000, {"name": "Rex", "categoryId": 3_000_000_000}),
    ),
    fault(
        "status_sold_stored_pending",
        Q_NEWPET + " " + Q_STATUS_ENUM,
        "status 'sold' is stored and echoed as 'pending' (an off-by-one in the status table)",
        echo("status", "sold", {"name": "Rex", "categoryId": 1, "status": "sold"}),
    ),
    fault(
        "status_null_default",
        Q_STATUS_ENUM,
        'an omitted status is echoed as `"status": null`, which is not a PetStatus',
        (post(REX, CREATED, PET),),
    ),
    fault(
        "create_missing_category",
        Q_NEWPET,
        "the 201 answer leaves out `categoryId`",
        (post(REX, CREATED, PET),),
    ),
    fault(
        "name_stored_lowercase",
        Q_GET,
        "the create answer echoes the name, but the stored animal's name is lower-cased",
        read_back(OK, ("field", "name", "Rex")),
    ),
    # --- ids ---
    fault(
        "create_client_id",
        Q_ID,
        "an `id` sent by the client is used as the new animal's id, so two creates can share an id",
        (post({"id": 7, "name": "Rex", "categoryId": 1}, CREATED, ("distinct", "id"), repeat=2),),
    ),
    fault("id_string", Q_ID, 'ids are sent as JSON strings ("1")', (post(REX, CREATED, PET),)),
    fault("id_above_int64", Q_ID, "ids start at 2^63, outside int64", (post(REX, CREATED, PET),)),
    fault(
        "id_reuse_after_writes",
        Q_ID,
        "the id counter wraps after 8 creates, so the 9th animal reuses id 1",
        (post(REX, CREATED, ("distinct", "id"), repeat=10),),
    ),
    fault(
        "store_full_drops_creates",
        Q_CREATED + " " + Q_404,
        "once the store holds 100 animals, creates answer 201 with an id but the animal is never stored",
        read_back(OK, ("same_pet", 0)),
        store="crowded",
    ),
    # --- read by id ---
    fault(
        "getpet_off_by_one",
        Q_GET,
        "GET /pets/{petId} returns the animal after the requested one",
        (create("Ada"), create("Bob"), get("/pets/{0[id]}", OK, ("same_pet", 0))),
    ),
    fault(
        "getpet_invents",
        Q_404,
        "an unknown id gets 200 with an invented animal",
        (get(UNKNOWN_ID, MISSING, ERROR),),
    ),
    fault(
        "getpet_null_body",
        Q_404,
        "an unknown id gets 200 with the body `null`",
        (get(UNKNOWN_ID, MISSING, ERROR),),
    ),
    fault(
        "getpet_400_unknown",
        Q_404,
        "an unknown (well-formed) id gets 400 instead of 404",
        (get(UNKNOWN_ID, MISSING, ERROR),),
    ),
    fault(
        "getpet_empty_body",
        Q_GET,
        "GET /pets/{petId} answers 200 with the right headers but an empty body for animals that exist",
        read_back(OK, PET),
    ),
    fault(
        "getpet_array",
        Q_GET,
        "GET /pets/{petId} answers a one-element array instead of a Pet",
        read_back(OK, ("json_object",), ("same_pet", 0)),
    ),
    fault(
        "getpet_crowded_404",
        Q_GET,
        "the lookup only searches the first 100 animals of the store: later ids get 404",
        read_back(OK, ("same_pet", 0)),  # on a crowded store the new animal is beyond the first 100
        store="crowded",
    ),
    fault(
        "getpet_big_id_float",
        Q_GET + " (petId: integer, format int64)",
        "ids start above 2^53 and petId is parsed through a float, so odd ids are not found",
        read_back(OK, ("same_pet", 0)),
        flags={"big_ids", "getpet_big_id_float"},
    ),
    fault(
        "getpet_python_repr",
        Q_JSON,
        "GET /pets/{petId} writes the Python repr of the animal (single quotes), not JSON",
        read_back(OK, ("json_object",)),
    ),
    # --- Error body ---
    fault(
        "error_status_string",
        Q_ERROR_TYPES,
        'the Error `status` is a string ("404")',
        (get(UNKNOWN_ID, MISSING, ERROR),),
    ),
    fault("error_code_missing", Q_ERROR, "Error bodies have no `code`", rejected({})),
    fault(
        "error_status_always_400",
        Q_ERROR,
        "every Error body says status 400, whatever the HTTP status (e.g. on 401)",
        (get("/pets", UNAUTH, ERROR, auth=None),),
    ),
    fault(
        "error_wrapped",
        Q_ERROR,
        'Error bodies are wrapped: {"error": {code, message, status}}',
        (get(UNKNOWN_ID, MISSING, ERROR),),
    ),
    # --- content type ---
    fault("list_text_plain", Q_JSON, "GET /pets is sent as text/plain", (get("/pets", OK, MEDIA),)),
    fault(
        "error_problem_json",
        Q_JSON,
        "Error bodies are sent as application/problem+json",
        (get("/pets", UNAUTH, MEDIA, auth=None),),
    ),
    fault("create_no_content_type", Q_JSON, "the 201 answer has no Content-Type", (post(REX, CREATED, MEDIA),)),
    # --- deprecation and sunset ---
    fault(
        "deprecation_missing", Q_DEPRECATED, "GET /pets/{petId} sends no Deprecation header", read_back(OK, DEPRECATION)
    ),
    fault(
        "deprecation_true",
        Q_DEPRECATED,
        "sends the draft-era `Deprecation: true` instead of an sf-date",
        read_back(OK, DEPRECATION),
    ),
    fault(
        "deprecation_httpdate",
        Q_DEPRECATED,
        "sends the deprecation date as an HTTP-date, not as an sf-date `@<seconds>`",
        read_back(OK, DEPRECATION),
    ),
    fault(
        "deprecation_future",
        Q_DEPRECATED_SINCE,
        "the Deprecation date is the removal date (5 Dec 2030), i.e. 'will be deprecated' instead of 'is deprecated'",
        read_back(OK, DEPRECATION),
    ),
    fault(
        "sunset_wrong_date",
        Q_SUNSET,
        "Sunset says 6 December 2030",
        read_back(OK, SUNSET),
    ),
    fault(
        "sunset_iso_format",
        Q_SUNSET,
        "Sunset is written as ISO 8601 (2030-12-05T00:00:00Z), not as an HTTP-date",
        read_back(OK, SUNSET),
    ),
    fault(
        "deprecation_on_list",
        Q_REPLACEMENT,
        "GET /pets (the replacement) is also marked with a Deprecation header",
        (get("/pets", OK, ("header_absent", "Deprecation")),),
    ),
    # --- store/orders ---
    fault(
        "orders_404",
        Q_ORDERS,
        "GET /store/orders answers 404",
        (get("/store/orders", ("status_below", 400), MEDIA, ("json",)),),
    ),
    fault(
        "orders_html",
        Q_JSON + " " + Q_ORDERS,
        "GET /store/orders answers an HTML page",
        (get("/store/orders", ("status_below", 400), MEDIA, ("json",)),),
    ),
    # --- whole list ---
    fault("list_wrapped", Q_LIST_ARRAY, 'the list is wrapped: {"items": [...]}', (get("/pets", OK, ARRAY),)),
    fault(
        "list_snake_case",
        Q_LIST_ARRAY,
        "animals in lists carry `category_id` instead of `categoryId` (create and read-by-id are right)",
        (create(), get("/pets", OK, ("pets",))),
    ),
    fault(
        "list_stale_cache",
        Q_LIST_200 + " " + Q_FILTER,
        "the list is cached at the first GET /pets: animals created afterwards never appear",
        (get("/pets", OK), create(), get("/pets?limit=100", OK, ("len_ge", 1))),
    ),
    fault(
        "flaky_every_7th_500",
        Q_LIST_200,
        "every 7th request answers 500 (with a proper Error body)",
        (get("/pets", OK, repeat=8),),
    ),
    fault(
        "crowded_list_500",
        Q_LIST_200,
        "GET /pets answers 500 once the store holds more than 120 animals",
        (get("/pets", OK, ARRAY),),
        store="crowded",
    ),
)

SILENT_ORDER = "§4.1: Returns a paginated list of animals. (No order is stated anywhere.)"
SILENT_PAGING = (
    "§4.4: The paging mechanism beyond `limit` (cursor, offset, page number, total count, link headers): not shown."
)
SILENT_QUERY = "§4.1 Responses: 200 and 401 only — what an out-of-range or unknown query value gets: not shown."
SILENT_NAME = "§2 Gaps: Constraints on `name` (length, format, uniqueness): not shown."

SILENT_SUNSET = (
    "§4.3: The operation is marked deprecated and is to be removed on 5 December 2030. "
    "(No header is prescribed; RFC 8594's Sunset header field is optional.)"
)
SILENT_CHALLENGE = (
    "§5.3: When the key is missing or invalid, the service answers 401 with an Error body. "
    "(Challenge parameters: not shown.) RFC 6750 §3: If the protected resource request included an access "
    'token and failed authentication, the resource server SHOULD include the "error" attribute.'
)
SILENT_LINKS = (
    "§4.3: The replacement is `GET /pets` with the `status` filter. (How deprecation and replacement are "
    "advertised beyond that: not shown; RFC 9745 and RFC 8594 define optional link relations.)"
)

COMPLIANT: tuple[Entry, ...] = (
    compliant(
        "compliant",
        "The whole document; where it is silent, the simplest reasonable choice.",
        "base server: ascending ids from 1, invalid query → 400, omitted status stays omitted",
        set(),
    ),
    compliant("newest_first", SILENT_ORDER, "pages list the newest animals first"),
    compliant(
        "page_cap_25",
        "§4.1: `limit` ... Maximum number of animals returned. " + SILENT_PAGING,
        "pages hold at most 25 animals whatever `limit` says",
    ),
    compliant(
        "pet_extra_fields",
        "§2: A Pet has every field of NewPet plus: `id`. (Further fields: not mentioned either way.)",
        "animals also carry `tags` and `createdAt`",
    ),
    compliant(
        "error_extra_fields",
        "§2 Error: `code`, `message`, `status` (all required). (Further fields: not mentioned either way.)",
        "Error bodies also carry `details` and `requestId`",
    ),
    compliant(
        "extra_headers",
        "§8: Rate limits and quotas: not shown.",
        "adds X-Request-Id, Cache-Control: no-store and RateLimit-style headers",
    ),
    compliant("query_422", SILENT_QUERY, "invalid `limit` or `status` query values get 422 with an Error body"),
    compliant("limit_clamped", SILENT_QUERY, "an out-of-range numeric `limit` is clamped into 1..100 and answered 200"),
    compliant(
        "default_status_available",
        "§3: The value `status` takes when it is omitted on creation: not shown.",
        "an omitted status becomes 'available'",
    ),
    compliant("unique_names", SILENT_NAME, "a name already in the store is refused with 400 Error"),
    compliant("name_length_40", SILENT_NAME, "names must be 1..40 characters; others are refused with 400 Error"),
    compliant(
        "big_ids",
        "§2 Pet: `id` integer, format int64, assigned by the service (values not shown).",
        "ids start at 2^53+1 (inside int64, beyond exact doubles)",
    ),
    compliant(
        "random_ids",
        "§2 Pet: `id` integer, format int64, assigned by the service (values not shown).",
        "ids are random positive int64 values",
    ),
    compliant(
        "orders_object",
        "§4.4: `GET /store/orders` exists. Its parameters and payloads: not shown.",
        'GET /store/orders answers {"orders": [], "total": 0}',
    ),
    compliant("error_codes_alt", "§7: The set of `code` values: not shown.", "Error codes look like 'PETSTORE-404'"),
    compliant(
        "no_sunset",
        SILENT_SUNSET,
        "GET /pets/{petId} sends Deprecation but no Sunset",
    ),
    compliant(
        "link_next", SILENT_PAGING, 'pages carry `Link: <...&after=ID>; rel="next"` and honour the `after` cursor'
    ),
    compliant(
        "charset_param",
        "§1: Request and response bodies are JSON (`application/json`). (Media type parameters: not discussed.)",
        "Content-Type is `application/json; charset=utf-8`",
    ),
    compliant("unknown_status_empty", SILENT_QUERY, "an unknown status filter value answers 200 with an empty array"),
    compliant(
        "ascii_pretty_json",
        "§1: Request and response bodies are JSON (`application/json`). (Layout and escaping: not discussed.)",
        "JSON is indented and every non-ASCII character is \\u-escaped",
    ),
    compliant(
        "bearer_error_param",
        SILENT_CHALLENGE,
        'challenges for a wrong key add error="invalid_token" and error_description',
    ),
    compliant(
        "deprecation_links",
        SILENT_LINKS,
        "GET /pets/{petId} also sends Link rel=deprecation, rel=sunset and rel=successor-version",
    ),
)

ENTRIES: tuple[Entry, ...] = FAULTS + COMPLIANT
BY_NAME: dict[str, Entry] = {entry.name: entry for entry in ENTRIES}

# A quick check every compliant variant must pass (run on a crowded store).
SANITY: tuple[Step, ...] = (
    get("/pets", UNAUTH, ERROR, CHALLENGE, MEDIA, auth=None),
    get("/pets", UNAUTH, ERROR, CHALLENGE, auth="Bearer wrong-key"),
    post(
        {"name": "Sanity Rex", "categoryId": 7, "status": "pending"},
        CREATED,
        PET,
        MEDIA,
        ("field", "name", "Sanity Rex"),
    ),
    get("/pets", OK, ("pets",), ("len_le", 20), ("unique_ids",), MEDIA),
    get("/pets?limit=100&status=sold", OK, ("pets",), ("len_le", 100), ("all_status", "sold")),
    get("/pets/{2[id]}", OK, ("same_pet", 2), DEPRECATION, SUNSET),
    get(UNKNOWN_ID, MISSING, ERROR),
    post({"categoryId": 1}, BAD, ERROR),
    get("/store/orders", ("status_below", 400), ("json",)),
)


def describe(entry: Entry) -> dict[str, Any]:
    """The public face of an entry (what --list prints)."""
    return {
        "name": entry.name,
        "kind": entry.kind,
        "store": entry.store,
        "quote": entry.quote,
        "description": entry.description,
        "flags": sorted(entry.flags),
    }
