"""The sentences the catalog quotes, and the helpers that build its entries.

``Q_*``: what the document (or a cited RFC) states, with its section; a fault
quotes the one it breaks. ``S_*``: what the document leaves open; a compliant
variant quotes the silence it exercises.
"""

from __future__ import annotations

from typing import Any

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
    '§4.2: "201 | Pet (the created animal, including the assigned `id`)." (the responses of a '
    'create are 201, 400 and 401; the name is a valid NewPet value: §2 "`name` | string | yes | '
    "The animal's name.\")"
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
