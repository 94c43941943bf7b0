"""The catalog: faulty and compliant Pet Store servers, as data.

Every entry has ``name``, ``kind`` ("fault" or "compliant"), ``quote`` (for a
fault: the sentence it breaks, with its section; for a compliant variant: the
silence it exercises), ``description``, ``store`` ("empty" or "crowded", the
latter run with ``--preload 150``), ``style`` (``app``: Starlette + SQLite on
uvicorn; ``gateway``: the same app behind the reverse proxy of ``proxy.py``;
``hand``: the hand-written ``http.server`` service of ``handmade.py``),
``flags`` (the switches of that style) and, for a fault, ``probe`` (the probe of
``probes.py`` that shows it) and ``demo`` (what the probe sees).
"""

from __future__ import annotations

from typing import Any

CROWDED_PRELOAD = 150

# the sentences (document section, or the cited RFC) ------------------------------
Q_LIMIT = (
    '§4.1 (and §8): "`limit` | integer | no | minimum 1, maximum 100, default 20 | Maximum number of animals returned."'
)
Q_STATUS_FILTER = (
    '§4.1: "`status` | PetStatus | no | one of `available`, `pending`, `sold` | Filters by availability status."'
)
Q_LIST = '§2: "A list of animals is a JSON array of Pet." (§4.1: "200 | JSON array of Pet.")'
Q_PETSTATUS = '§2 PetStatus: "Allowed values: `available`, `pending`, `sold`."'
Q_CATEGORY = (
    '§2 NewPet: "`categoryId` | integer, format int64 | yes | Identifier of the category '
    'the animal belongs to." with §4.2 "201 | Pet (the created animal, including the '
    'assigned `id`)."'
)
Q_NAME = (
    '§2 NewPet: "`name` | string | yes | The animal\'s name." with §4.2 "201 | Pet (the '
    'created animal, including the assigned `id`)."'
)
Q_CREATED = '§4.2: "201 | Pet (the created animal, including the assigned `id`)."'
Q_400 = '§4.2: "400 | Error (body missing required fields or containing invalid values)." (§7: 400 for `POST /pets`)'
Q_ERROR = (
    '§7: "All error responses use the Error body (`code`, `message`, `status`; all '
    'required). `status` repeats the HTTP status code."'
)
Q_JSON = '§1: "Request and response bodies are JSON (`application/json`)."'
Q_401 = '§5.3: "When the key is missing or invalid, the service answers 401 with an Error body."'
Q_EVERY_OP = (
    '§5.1: "Every operation requires HTTP bearer authentication." (§4: "All three '
    'operations require the bearer credential described under Authentication.")'
)
Q_SCHEME = (
    '§5.2: "The client sends the API key as a bearer token in the `Authorization` header, '
    'in the form `Authorization: Bearer <API_KEY>`." with RFC 9110 §11.1: "It uses a '
    'case-insensitive token to identify the authentication scheme"'
)
Q_CHALLENGE = (
    'RFC 9110 §11.6.1: "A server generating a 401 (Unauthorized) response MUST send a '
    'WWW-Authenticate header field containing at least one challenge." (§5.1: HTTP bearer '
    "authentication)"
)
Q_BEARER_CHALLENGE = (
    'RFC 6750 §3: "All challenges defined by this specification MUST use the auth-scheme '
    'value "Bearer". This scheme MUST be followed by one or more auth-param values."'
)
Q_404 = (
    '§4.3: "404 | Error (the requested resource could not be found)." and §7: "404 | The '
    'requested animal cannot be found. | `GET /pets/{petId}`"'
)
Q_READ = (
    '§4.3: "Path parameter `petId`: integer, format int64, required. It is the identifier '
    'of the animal to retrieve." ("200 | Pet.")'
)
Q_DEPRECATION_FORM = (
    'RFC 9745 §2.1: "`Deprecation` is an Item Structured Header Field; its value MUST be a '
    'Date as per Section 3.3.7 of [RFC9651]."'
)
Q_SUNSET_DATE = (
    '§4.3: "The operation is marked deprecated and is to be removed on 5 December 2030." '
    '(§9.3: "is removed on 5 December 2030")'
)
Q_SUNSET_FORM = (
    'RFC 8594 §3: "The Sunset value is an HTTP-date timestamp" and RFC 9110 §5.6.7: "the '
    'sender MUST generate those timestamps in the IMF-fixdate format"'
)
Q_SUNSET_ORDER = (
    'RFC 9745 §4: "The timestamp given in the Sunset HTTP header field MUST NOT be earlier '
    'than the one given in the Deprecation header field."'
)
Q_NOT_DEPRECATED = (
    '§9.3: "`GET /pets/{petId}` is deprecated and is removed on 5 December 2030. Clients '
    'use `GET /pets` with `status` instead." (only getPet is deprecated; RFC 9745 §2.1: '
    'the header "describes the deprecation of the resource identified with the response it '
    'occurred within")'
)
Q_ORDERS = '§4.4: "`GET /store/orders` exists."'
Q_UNIQUE = '§2 Pet: "`id` | integer, format int64 | yes | Unique identifier, assigned by the service on creation."'
Q_405 = (
    'RFC 9110 §15.5.6: "The origin server MUST generate an Allow header field in a 405 '
    "response containing a list of the target resource's currently supported methods.\""
)
Q_5XX_CREATE = (
    '§4.2 lists the answers to a create: "201 | Pet", "400 | Error (body missing required '
    'fields or containing invalid values)", "401"; a valid NewPet gets 201 (NewPet: '
    '"`name` | string", "`categoryId` | integer, format int64")'
)

# the silences a compliant variant exercises ----------------------------------------
S_PAGING = (
    '§4.4: "The paging mechanism beyond `limit` (cursor, offset, page number, total count, '
    'link headers): not shown." (the order of a list is not stated)'
)
S_NAME = '§2 Gaps: "Constraints on `name` (length, format, uniqueness): not shown."'
S_DEFAULT_STATUS = '§3: "The value `status` takes when it is omitted on creation: not shown."'
S_CATEGORY = '§2 Gaps: "Fields of category records and order records: not shown."'
S_ORDERS = '§4.4: "`GET /store/orders` exists. Its parameters and payloads: not shown."'
S_RATE = '§8: "Rate limits and quotas: not shown."'
S_CODES = (
    '§7: "The set of `code` values: not shown." and the 400 row names `POST /pets` only: '
    "the answer to a bad query value of `GET /pets` (or a non-integer `petId`) is not stated"
)
S_IDS = (
    '§2 Pet: "`id` | integer, format int64 | yes | Unique identifier, assigned by the '
    'service on creation." (how ids are chosen: not stated)'
)
S_EXTRA = "§2 lists the fields a Pet has; nothing forbids more fields (not stated)"
S_HEADERS = "headers other than those of the authentication and deprecation: not stated"


def fault(
    name: str,
    style: str,
    quote: str,
    description: str,
    probe: str,
    demo: str,
    store: str = "empty",
    flags: tuple[str, ...] | None = None,
) -> dict[str, Any]:
    return {
        "name": name,
        "kind": "fault",
        "quote": quote,
        "description": description,
        "store": store,
        "style": style,
        "flags": list(flags if flags is not None else (name,)),
        "probe": probe,
        "demo": demo,
    }


def compliant(
    name: str,
    style: str,
    quote: str,
    description: str,
    flags: tuple[str, ...] = (),
    store: str = "crowded",
) -> dict[str, Any]:
    return {
        "name": name,
        "kind": "compliant",
        "quote": quote,
        "description": description,
        "store": store,
        "style": style,
        "flags": list(flags),
    }


A, G, H = "app", "gateway", "hand"

FAULTS = [
    # lists and paging -----------------------------------------------------------
    fault(
        "default_limit_all",
        A,
        Q_LIMIT,
        "Without `limit` the list query has no LIMIT: a crowded store returns every animal.",
        "list_limits",
        "GET /pets on 150 animals returns 150 (> 20)",
        "crowded",
    ),
    fault(
        "limit_plus_one",
        A,
        Q_LIMIT,
        "Fetches limit+1 rows to see if a next page exists and forgets to drop the extra one.",
        "list_limits",
        "GET /pets?limit=5 returns 6 animals, GET /pets returns 21",
        "crowded",
    ),
    fault(
        "limit_100_refused",
        A,
        Q_LIMIT,
        "Range check `1 <= limit < 100`: the documented maximum 100 gets 400.",
        "list_limits",
        "GET /pets?limit=100 answers 400",
    ),
    fault(
        "limit_ignored_with_status",
        A,
        Q_LIMIT,
        "The status-filtered query path forgets the LIMIT clause.",
        "list_status_filter",
        "GET /pets?status=available&limit=5 returns 50 animals",
        "crowded",
    ),
    fault(
        "status_filter_sold_ignored",
        A,
        Q_STATUS_FILTER,
        "The filter table of the query builder lacks `sold`: status=sold returns every status.",
        "list_status_filter",
        "GET /pets?status=sold&limit=100 contains available animals",
        "crowded",
    ),
    fault(
        "list_status_capitalized",
        A,
        Q_PETSTATUS,
        "List items show the display label (`Available`); single reads are right.",
        "list_matches_read",
        "an item of GET /pets has status 'Available'",
        "crowded",
    ),
    fault(
        "list_omits_categoryid",
        A,
        Q_LIST,
        "The list uses a summary projection without `categoryId`.",
        "list_matches_read",
        "items of GET /pets lack the required categoryId",
        "crowded",
    ),
    fault(
        "list_id_string",
        A,
        Q_LIST,
        "List rows go through a text cast: `id` is a JSON string in lists only.",
        "list_matches_read",
        'items of GET /pets have id "1"',
        "crowded",
    ),
    fault(
        "list_truncates_long_names",
        A,
        Q_LIST,
        "List rendering shortens names over 64 characters with an ellipsis.",
        "list_matches_read",
        "a 100-character name is 64 characters long in the list",
    ),
    # creates: values the document allows ----------------------------------------------
    fault(
        "category_real_column",
        A,
        Q_CATEGORY,
        "categoryId is stored in a REAL column: values above 2^53 lose precision.",
        "create_categories",
        "categoryId 2^53+1 comes back as 2^53",
    ),
    fault(
        "category_int32_wrap",
        A,
        Q_CATEGORY,
        "categoryId goes through a 32-bit integer: 2^31 wraps to -2^31.",
        "create_categories",
        "categoryId 2147483648 comes back as -2147483648",
    ),
    fault(
        "category_zero_dropped",
        A,
        Q_CATEGORY,
        "The renderer tests `if categoryId:`: a Pet with category 0 has no categoryId.",
        "create_categories",
        "create with categoryId 0: 201 Pet without categoryId",
    ),
    fault(
        "name_empty_null",
        A,
        Q_NAME,
        "Empty names are rendered as null (`name or None`).",
        "create_names",
        'create with name "": 201 Pet with name null',
    ),
    fault(
        "name_truncated_255",
        A,
        Q_NAME,
        "A VARCHAR(255)-like truncation: long names are silently cut to 255 characters.",
        "create_names",
        "a 10,000-character name comes back with 255 characters",
    ),
    fault(
        "name_nul_500",
        A,
        Q_5XX_CREATE,
        "Names go through a C-string API: a NUL character crashes the create (500).",
        "create_names",
        "create with name 'nul\\x00byte' answers 500",
    ),
    fault(
        "name_astral_question_mark",
        A,
        Q_NAME,
        "A 3-byte UTF-8 column (utf8mb3): characters outside the BMP become '?'.",
        "create_names",
        "name 'Rex \U0001f436' comes back as 'Rex ?'",
    ),
    fault(
        "name_huge_500",
        A,
        Q_5XX_CREATE,
        "Rows over 64 KiB fail in the storage layer: a 1,000,000-character name gets 500.",
        "create_huge_name",
        "create with a 1,000,000-character name answers 500",
    ),
    fault(
        "name_apostrophe_500",
        A,
        Q_5XX_CREATE,
        "The INSERT is built with string formatting: a name with an apostrophe is a SQL error.",
        "create_names",
        'create with name "O\'Malley" answers 500',
    ),
    fault(
        "status_pending_refused",
        A,
        Q_PETSTATUS,
        "The enum of the validator has a typo (`pendng`): valid creates with pending get 400.",
        "create_plain",
        "create with status 'pending' answers 400",
    ),
    fault(
        "status_null_when_omitted",
        A,
        Q_PETSTATUS,
        'A create without status renders `"status": null`, which is not a PetStatus.',
        "create_plain",
        "create without status: 201 Pet with status null",
    ),
    fault("create_200", A, Q_CREATED, "A create answers 200 instead of 201.", "create_plain", "POST /pets answers 200"),
    fault(
        "create_no_id",
        A,
        Q_CREATED,
        "The create answers the NewPet it got, without the assigned id.",
        "create_plain",
        "201 body has no id",
    ),
    fault(
        "read_first_page_only",
        A,
        Q_READ,
        "GET /pets/{petId} searches the first page of 100 animals only.",
        "create_plain",
        "on 150 animals, the animal just created reads as 404",
        "crowded",
    ),
    fault(
        "ids_duplicate_after_100",
        A,
        Q_UNIQUE,
        "The next id is 'count + 1', counted on a page of at most 100 rows: from the 101st "
        "animal on every new animal gets id 101.",
        "ids_unique",
        "on 150 animals, two creates both get id 101",
        "crowded",
    ),
    fault(
        "json_charset_415",
        A,
        Q_JSON,
        "The create compares Content-Type to the exact string `application/json`: a valid "
        "JSON body sent as `application/json; charset=utf-8` gets 415.",
        "create_content_type",
        "POST with Content-Type application/json; charset=utf-8 answers 415",
    ),
    # creates: invalid bodies ----------------------------------------------------------
    fault(
        "invalid_status_accepted",
        A,
        Q_400,
        "status is not validated on create.",
        "create_invalid",
        "status 'unknown' is accepted with 201",
    ),
    fault(
        "missing_category_accepted",
        A,
        Q_400,
        "categoryId is treated as optional.",
        "create_invalid",
        "a body without categoryId gets 201 with categoryId null",
    ),
    fault(
        "category_bool_accepted",
        A,
        Q_400,
        "`isinstance(True, int)`: categoryId true is accepted as 1.",
        "create_invalid",
        "categoryId true gets 201",
    ),
    fault(
        "category_string_coerced",
        A,
        Q_400,
        'Numeric strings are coerced: categoryId "5" is accepted as 5.',
        "create_invalid",
        'categoryId "5" gets 201',
    ),
    fault(
        "category_beyond_int64_500",
        A,
        Q_400,
        "No int64 range check: 2^63 reaches SQLite and fails with 500.",
        "create_invalid",
        "categoryId 9223372036854775808 answers 500",
    ),
    fault(
        "malformed_json_500",
        A,
        Q_400,
        "The JSON parse error is not caught: a broken body gets 500.",
        "create_invalid",
        "body `not json` answers 500",
    ),
    fault(
        "body_array_500",
        A,
        Q_400,
        "The body is assumed to be an object: a JSON array crashes the create (500).",
        "create_invalid",
        "body `[1, 2]` answers 500",
    ),
    fault(
        "validation_422",
        A,
        Q_400,
        "Framework-style validation: missing fields get 422 with a `detail` list.",
        "create_invalid",
        'body {} answers 422 {"detail": [...]}',
    ),
    fault(
        "problem_json_400",
        A,
        Q_ERROR,
        "400 answers are RFC 9457 problem details (type/title/detail), not the Error body.",
        "create_invalid",
        "400 body lacks code and message",
    ),
    fault(
        "error_status_mismatch_400",
        A,
        Q_ERROR,
        "The 400 Error says status 422 (copied from the validator).",
        "create_invalid",
        "HTTP 400 with body status 422",
    ),
    # reads ------------------------------------------------------------------------------
    fault(
        "read_int32_500",
        A,
        Q_404,
        "petId is parsed into a 32-bit integer: ids above 2^31-1 crash the read.",
        "read_missing",
        "GET /pets/2147483648 answers 500",
    ),
    fault(
        "read_negative_plain_404",
        A,
        Q_ERROR,
        "The route is `/pets/{petId:int}`, which only matches digits: a negative petId "
        "falls to the framework's plain-text 404.",
        "read_missing",
        "GET /pets/-1 answers 404 text/plain 'Not Found'",
    ),
    fault(
        "read_404_detail",
        A,
        Q_ERROR,
        'The not-found answer is the framework\'s `{"detail": "Not Found"}`.',
        "read_missing",
        "404 body has no code, message or status",
    ),
    fault(
        "error_status_string",
        A,
        Q_ERROR,
        'The 404 Error carries status as a string "404".',
        "read_missing",
        '404 body status is "404"',
    ),
    # authentication -------------------------------------------------------------------
    fault(
        "error_missing_message_401",
        A,
        Q_401,
        "The 401 Error has code and status but no message.",
        "auth_missing",
        "401 body without message",
    ),
    fault(
        "invalid_key_403",
        A,
        Q_401,
        "A wrong key gets 403 (only a missing key gets 401).",
        "auth_invalid",
        "Bearer wrong-key answers 403",
    ),
    fault(
        "key_prefix_accepted",
        A,
        Q_401,
        "The key check is `key.startswith(token)`: an empty or truncated token passes.",
        "auth_invalid",
        "Bearer <key minus its last character> answers 200",
    ),
    fault(
        "scheme_case_sensitive",
        A,
        Q_SCHEME,
        "The scheme is compared case-sensitively: `bearer <key>` gets 401.",
        "auth_scheme_case",
        "Authorization: bearer <key> answers 401",
    ),
    fault(
        "no_www_authenticate",
        A,
        Q_CHALLENGE,
        "401 answers carry no WWW-Authenticate header.",
        "auth_missing",
        "401 without WWW-Authenticate",
    ),
    fault(
        "www_authenticate_basic",
        A,
        Q_BEARER_CHALLENGE,
        "The 401 challenge is copied from a Basic-auth service: `Basic realm=...`.",
        "auth_missing",
        'WWW-Authenticate: Basic realm="petstore"',
    ),
    fault(
        "www_authenticate_bare",
        A,
        Q_BEARER_CHALLENGE,
        "The challenge is a bare `Bearer` with no auth-param.",
        "auth_missing",
        "WWW-Authenticate: Bearer",
    ),
    fault(
        "list_unprotected",
        A,
        Q_EVERY_OP,
        "listPets is left out of the authentication middleware.",
        "auth_missing",
        "GET /pets without Authorization answers 200",
    ),
    fault(
        "read_any_token",
        A,
        Q_401,
        "getPet only checks that a bearer token is present, not which.",
        "auth_invalid",
        "GET /pets/{id} with Bearer wrong-key answers 200",
    ),
    fault(
        "validate_before_auth",
        A,
        Q_401,
        "The create validates the body before it authenticates.",
        "auth_missing",
        "POST /pets {} without Authorization answers 400",
    ),
    fault(
        "notfound_before_auth",
        A,
        Q_401,
        "The read looks the animal up before it authenticates.",
        "auth_missing",
        "GET /pets/<missing> without Authorization answers 404",
    ),
    fault(
        "orders_unprotected",
        A,
        Q_EVERY_OP,
        "The store area is mounted outside the authentication.",
        "auth_missing",
        "GET /store/orders without Authorization answers 200",
    ),
    fault(
        "orders_missing", A, Q_ORDERS, "The store area was never deployed.", "orders", "GET /store/orders answers 404"
    ),
    fault(
        "method_405_no_allow",
        A,
        Q_405,
        "405 answers carry no Allow header.",
        "method_not_allowed",
        "DELETE /pets/{id} answers 405 without Allow",
    ),
    # deprecation -------------------------------------------------------------------------
    fault(
        "deprecation_http_date",
        A,
        Q_DEPRECATION_FORM,
        "Deprecation is an HTTP-date (the form of early drafts).",
        "read_deprecation",
        "Deprecation: Wed, 01 Jan 2025 00:00:00 GMT",
    ),
    fault(
        "deprecation_boolean",
        A,
        Q_DEPRECATION_FORM,
        "Deprecation is the boolean `true` of early drafts.",
        "read_deprecation",
        "Deprecation: true",
    ),
    fault(
        "deprecation_on_list",
        A,
        Q_NOT_DEPRECATED,
        "The deprecation headers are added to listPets too (the replacement).",
        "list_not_deprecated",
        "GET /pets carries Deprecation",
    ),
    fault(
        "sunset_day_month_swapped",
        A,
        Q_SUNSET_DATE,
        "05/12/2030 was read month-first: Sunset is 12 May 2030.",
        "read_deprecation",
        "Sunset: Sun, 12 May 2030 00:00:00 GMT",
    ),
    fault(
        "sunset_iso",
        A,
        Q_SUNSET_FORM,
        "Sunset is written in ISO 8601.",
        "read_deprecation",
        "Sunset: 2030-12-05T00:00:00Z",
    ),
    fault(
        "sunset_before_deprecation",
        A,
        Q_SUNSET_ORDER,
        "Deprecation is set to 2031-01-01, after the Sunset.",
        "read_deprecation",
        "Deprecation: @1924992000 with Sunset 5 Dec 2030",
    ),
    # gateway -----------------------------------------------------------------------------
    fault(
        "gw_strips_www_authenticate",
        G,
        Q_CHALLENGE,
        "The gateway's response-header allowlist drops WWW-Authenticate.",
        "auth_missing",
        "401 through the gateway has no WWW-Authenticate",
    ),
    fault(
        "gw_html_404",
        G,
        Q_ERROR,
        "The gateway intercepts upstream 404s and serves its HTML error page.",
        "read_missing",
        "GET /pets/<missing> answers 404 text/html",
    ),
    fault(
        "gw_cache_ignores_auth",
        G,
        Q_401,
        "The gateway caches 200 reads of /pets/{id} by path only, whatever the credentials.",
        "auth_invalid",
        "after one good read, GET /pets/{id} with a wrong key answers 200",
    ),
    fault(
        "gw_cache_key_without_query",
        G,
        Q_LIMIT,
        "The gateway caches GET /pets under its path, without the query string.",
        "list_limits",
        "GET /pets?limit=1 after GET /pets answers the cached page of 6",
    ),
    fault(
        "gw_negative_cache_404",
        G,
        Q_READ,
        "The gateway caches 404 reads for 30 s: an animal read before it existed stays 404.",
        "read_after_miss",
        "GET /pets/{next id} → 404, create gets that id, read → 404",
    ),
    fault(
        "gw_body_limit_413_html",
        G,
        Q_ERROR,
        "The gateway limits request bodies to 8 KiB and answers with an HTML 413 page.",
        "create_names",
        "a 10,000-character name answers 413 text/html",
    ),
    fault(
        "gw_buffer_502",
        G,
        Q_CREATED,
        "The gateway's response buffer is 64 KiB: larger upstream answers become 502 HTML.",
        "create_names",
        "create with a 100,000-character name answers 502 text/html",
    ),
    fault(
        "gw_adds_deprecation",
        G,
        Q_NOT_DEPRECATED,
        "A gateway rule adds Deprecation and Sunset to every path under /v1/pets.",
        "list_not_deprecated",
        "GET /pets carries Deprecation",
    ),
    fault(
        "gw_content_type_text",
        G,
        Q_JSON,
        "The gateway's default_type text/plain replaces the upstream Content-Type.",
        "create_plain",
        "201 with Content-Type text/plain",
    ),
    fault(
        "gw_drops_query",
        G,
        Q_LIMIT,
        "The gateway builds the upstream URL from the path only: the query string is lost.",
        "list_limits",
        "GET /pets?limit=5 returns 20 animals",
        "crowded",
    ),
    fault(
        "gw_post_drops_authorization",
        G,
        Q_CREATED,
        "The gateway forwards only Content-Type and Accept on POST: valid creates get 401.",
        "create_plain",
        "POST /pets with a good key answers 401",
    ),
    fault(
        "gw_status_200",
        G,
        Q_CREATED,
        "The gateway answers every upstream 2xx as 200.",
        "create_plain",
        "POST /pets answers 200",
    ),
    fault(
        "gw_json_float",
        G,
        Q_CATEGORY,
        "The gateway re-serialises JSON through doubles, as JavaScript does.",
        "create_categories",
        "categoryId 2^53+1 comes back as 2^53",
    ),
    # hand-written ----------------------------------------------------------------------
    fault(
        "hand_json_unescaped",
        H,
        Q_JSON,
        "The hand-written JSON writer escapes quotes only: control characters and "
        "backslashes go out raw, which is not JSON.",
        "create_names",
        "create with name 'tab\\there' answers a body that does not parse",
    ),
    fault(
        "hand_content_length_chars",
        H,
        Q_JSON,
        "Content-Length counts characters, not bytes: bodies with non-ASCII text are cut.",
        "create_names",
        "create with name 'Zoë' answers a truncated body",
    ),
    fault(
        "hand_index_lookup",
        H,
        Q_404,
        "The read is `pets[petId - 1]`: petId 0 and negative ids wrap around to the last animals.",
        "read_missing",
        "GET /pets/0 answers 200 with the newest animal",
    ),
]

COMPLIANT = [
    compliant(
        "compliant",
        A,
        S_PAGING,
        "The base: Starlette + SQLite, ids from 1, lists by id ascending, status left "
        "out when omitted, 400 Error for bad query values, 404 for a non-integer petId.",
        store="empty",
    ),
    compliant("compliant_crowded", A, S_PAGING, "The base on a crowded store."),
    compliant("newest_first", A, S_PAGING, "Lists ORDER BY id DESC.", ("newest_first",)),
    compliant(
        "hand_newest_first",
        H,
        S_PAGING,
        "The hand-written in-memory service: lists newest first, its own JSON writer, "
        "Deprecation @1704067200, Sunset at 23:59:59 on 5 Dec 2030 and a deprecation Link.",
    ),
    compliant("hand_by_name", H, S_PAGING, "The hand-written service with lists ordered by name.", ("hand_by_name",)),
    compliant(
        "page_cap_50",
        A,
        Q_LIMIT,
        "Pages hold at most 50 animals even when limit is higher (limit is a maximum).",
        ("page_cap_50",),
    ),
    compliant("extra_fields", A, S_EXTRA, "Pets also carry createdAt, tags and a category object.", ("extra_fields",)),
    compliant(
        "query_422", A, S_CODES, "A bad limit or status value on GET /pets gets 422 with an Error body.", ("query_422",)
    ),
    compliant("petid_text_400", A, S_CODES, "A non-integer petId gets 400 with an Error body.", ("petid_text_400",)),
    compliant(
        "default_available",
        A,
        S_DEFAULT_STATUS,
        "A create without status makes an available animal.",
        ("default_available",),
    ),
    compliant(
        "name_rules",
        A,
        S_NAME,
        "Names must have 1 to 200 characters and no control characters (400 Error).",
        ("name_rules",),
    ),
    compliant(
        "unique_names", A, S_NAME, "A name already in the store gets 400 Error `duplicate_name`.", ("unique_names",)
    ),
    compliant(
        "category_positive",
        A,
        S_CATEGORY,
        "categoryId below 1 gets 400 Error (categories are positive).",
        ("category_positive",),
    ),
    compliant("huge_ids", A, S_IDS, "Ids are not sequential and start above 2^53 (still int64).", ("huge_ids",)),
    compliant(
        "rate_limited",
        A,
        S_RATE,
        "Every 50th request gets 429 with Retry-After: 1 and an Error body.",
        ("rate_limited",),
    ),
    compliant(
        "orders_object",
        A,
        S_ORDERS,
        'GET /store/orders answers an object {"orders": [], "total": 0}.',
        ("orders_object",),
    ),
    compliant(
        "gateway_headers",
        G,
        S_HEADERS,
        "Behind the gateway, which adds Via, X-Request-Id, Cache-Control: no-store and security headers.",
        ("gateway_headers",),
    ),
    compliant("gateway_plain", G, S_HEADERS, "Behind the gateway with no extra headers."),
]

ENTRIES = FAULTS + COMPLIANT
BY_NAME = {entry["name"]: entry for entry in ENTRIES}
