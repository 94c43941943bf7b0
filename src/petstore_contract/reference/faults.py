"""The fault catalog: named defects the reference server can be started with.

Each fault is written from one sentence of the interface document (``spec/interface.md``)
or of an RFC the document relies on, quotes it word for word, breaks exactly the one clause
of the registry (``clauses.toml``) that judges that sentence, and leaves the server
otherwise conformant.  The self-test runs the contract suite against every fault and
demands that a failing test names the fault's clause.

Fields beyond ``name``, ``clause`` and ``description``:

``quote``
    the sentence the fault breaks, word for word (table rows are quoted as their cells,
    without the outer bars).  Quotes from an RFC are the ones in ``RFC_QUOTES``.
``dependants``
    other clause ids a suite may legitimately *also* report violated, because the clause
    itself is broken by the same misbehaviour (e.g. a read that answers another animal also
    breaks the create -> read round trip).  Kept minimal: a clause that merely cannot be
    judged because of the fault (say, counting the items of a list that is not an array) is
    not a dependant; a suite should call it undecided, not violated.  The goal is zero
    collateral.
``generated_only``
    only the generated (Schemathesis) tests are expected to find the fault.
``needs_complete_view``
    the fault is decidable only while the suite sees the whole store (its clause is a
    ``complete-view`` clause, or the fault shows only for ids or animals the suite can tell
    apart from other clients' only then).  On a store too large to see whole, a suite may
    call the clause undecided rather than failed.

To add a fault: add a ``_fault(...)`` here, then make ``reference/app.py`` misbehave when
``self.has(<name>)`` is true, at the one place the clause is decided.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Fault:
    name: str
    clause: str
    description: str
    quote: str
    dependants: tuple[str, ...] = ()
    generated_only: bool = False
    needs_complete_view: bool = False


# -- the sentences faults break, word for word ----------------------------------------------
# From the interface document (spec/interface.md; table rows as their cells).
LIST_IS_ARRAY = "A list of animals is a JSON array of Pet."
LIST_200 = "200 | JSON array of Pet."
LIST_PAGINATED = "Returns a paginated list of animals."
LIMIT_ROW = "`limit` | integer | no | minimum 1, maximum 100, default 20 | Maximum number of animals returned."
LIMIT_LIMITS_ROW = "`limit` query parameter | `GET /pets` | minimum 1, maximum 100, default 20"
STATUS_FILTER_ROW = (
    "`status` | PetStatus | no | one of `available`, `pending`, `sold` | Filters by availability status."
)
ID_ROW = "`id` | integer, format int64 | yes | Unique identifier, assigned by the service on creation."
PET_HAS_NEWPET = "A Pet has every field of NewPet plus:"
STATUS_FIELD_ROW = "`status` | PetStatus | no | Availability status."
STATUS_DEFAULT = "The value `status` takes when it is omitted on creation: not shown."
STATUS_VALUES = "Allowed values: `available`, `pending`, `sold`."
CREATE_201 = "201 | Pet (the created animal, including the assigned `id`)."
CREATE_400 = "400 | Error (body missing required fields or containing invalid values)."
CREATE_400_TABLE = "400 | The request body is missing required fields or contains invalid values. | `POST /pets`"
CREATE_REQUIRED = "`name` and `categoryId` are required."
READ_PETID = "It is the identifier of the animal to retrieve."
READ_200 = "200 | Pet."
READ_404 = "404 | The requested animal cannot be found. | `GET /pets/{petId}`"
READ_DEPRECATED = "The operation is marked deprecated and is to be removed on 5 December 2030."
READ_REMOVED = "`GET /pets/{petId}` is deprecated and is removed on 5 December 2030."
AUTH_EVERY = "Every operation requires HTTP bearer authentication."
AUTH_FORM = (
    "The client sends the API key as a bearer token in the `Authorization` header, "
    "in the form `Authorization: Bearer <API_KEY>`."
)
AUTH_401 = "When the key is missing or invalid, the service answers 401 with an Error body."
ERROR_BODY = "All error responses use the Error body (`code`, `message`, `status`; all required)."
ERROR_STATUS = "`status` repeats the HTTP status code."
JSON_BODIES = "Request and response bodies are JSON (`application/json`)."
ORDERS_EXIST = "`GET /store/orders` exists."
# From RFCs the document relies on (it says "HTTP bearer authentication" and "deprecated").
RFC9110_CHALLENGE = (
    "A server generating a 401 (Unauthorized) response MUST send a WWW-Authenticate header field "
    "containing at least one challenge."
)
RFC9110_SCHEME = "It uses a case-insensitive token to identify the authentication scheme."
RFC9745_SUNSET = (
    "The timestamp given in the Sunset HTTP header field MUST NOT be earlier than the one given in the "
    "Deprecation header field."
)
RFC_QUOTES = frozenset({RFC9110_CHALLENGE, RFC9110_SCHEME, RFC9745_SUNSET})

# -- dependants that recur ---------------------------------------------------------------------
# A read that answers something other than the animal created also breaks the generated
# create -> read -> list round trip: the same misbehaviour, seen from the stateful tests.
ROUND_TRIP = ("stateful.round-trip",)
# A name or value changed on creation is changed on every later hop of the round trip too.
ECHO = ("stateful.round-trip",)
# An id handed out twice overwrites the earlier animal: reading or listing it finds the later one.
ID_TWICE = ("read.found", "list.status.found", "stateful.round-trip")
# An accepted status outside PetStatus is stored, so the list and the read answer a non-Pet.
NON_PET_STATUS = ("list.shape", "read.found", "create.created")
# Every read answers 401: each clause judged on a read's answer is broken along with it.
NO_READS = ("read.found", "read.not-found", "read.deprecation", "read.sunset", "stateful.round-trip")
# Where the whole store is seen, an animal the list leaves out (or adds) makes the page shorter
# (or longer) than the store allows: min(k, n, C) is broken with the complete-view clause.
LIST_COUNT = ("list.limit.fills",)
# A page that comes back short or empty makes a complete-view listing miss animals.
LIST_VIEW = ("list.status.found",)


# A 5xx also breaks "odd input never gives a 5xx" (responses.documented).
SERVER_ERROR = ("responses.documented",)


def _fault(
    name: str,
    clause: str,
    quote: str,
    description: str,
    dependants: tuple[str, ...] = (),
    *,
    generated_only: bool = False,
    needs_complete_view: bool = False,
) -> Fault:
    return Fault(name, clause, description, quote, dependants, generated_only, needs_complete_view)


_CATALOG: tuple[Fault, ...] = (
    # GET /pets: shape
    _fault("list_wraps_array", "list.shape", LIST_IS_ARRAY, 'wraps the list in an object {"items": [...]}'),
    _fault("list_item_id_string", "list.shape", LIST_IS_ARRAY, "sends list item ids as strings"),
    _fault("list_item_status_uppercase", "list.shape", LIST_IS_ARRAY, "sends list item status upper-cased"),
    _fault("list_item_missing_category", "list.shape", LIST_IS_ARRAY, "drops categoryId from list items"),
    # GET /pets: limit
    _fault("list_rejects_limit_100", "list.limit.accepted", LIMIT_ROW, "treats 100 as out of range"),
    _fault("list_rejects_limit_1", "list.limit.accepted", LIMIT_ROW, "treats 1 as out of range"),
    _fault("list_ignores_limit", "list.limit.honoured", LIMIT_ROW, "ignores limit and returns the default page"),
    _fault(
        "list_limit_off_by_one",
        "list.limit.honoured",
        LIMIT_ROW,
        "returns limit + 1 animals",
        ("list.limit.default",),  # the default page (limit 20) comes back with 21 as well
    ),
    _fault(
        "list_status_ignores_limit",
        "list.limit.honoured",
        LIMIT_ROW,
        "with a status filter, ignores limit and returns up to 100 matching animals",
        ("list.limit.default",),  # without limit too: more than the default 20
    ),
    _fault("list_default_50", "list.limit.default", LIMIT_ROW, "returns up to 50 animals when limit is absent"),
    _fault(
        "list_default_5",
        "list.limit.default",
        LIMIT_ROW,
        "returns 5 animals when limit is absent (limit=20 still returns 20)",
    ),
    _fault(
        "list_no_maximum",
        "list.limit.maximum",
        LIMIT_LIMITS_ROW,
        "accepts limit up to 1000",
        ("list.limit.invalid",),  # limit=1000 is out of range, and its page exceeds the bounds
    ),
    _fault(
        "list_500_on_non_integer_limit",
        "list.limit.invalid",
        LIMIT_ROW,
        "answers 500 to a non-integer limit",
        SERVER_ERROR,
    ),
    _fault("list_zero_limit_returns_all", "list.limit.invalid", LIMIT_ROW, "treats limit=0 as 'no limit'"),
    _fault(
        "list_500_on_negative_limit", "list.limit.invalid", LIMIT_ROW, "answers 500 to a negative limit", SERVER_ERROR
    ),
    # GET /pets: pages filled as far as the store allows
    _fault(
        "list_short_by_one",
        "list.limit.fills",
        LIST_PAGINATED,
        "answers limit - 1 animals when limit or more match",
        LIST_VIEW,  # a store of exactly limit animals looks whole one animal short
    ),
    _fault(
        "list_filter_after_cut",
        "list.limit.fills",
        LIST_PAGINATED,
        "cuts the page to limit before applying the status filter (a filtered page comes back short or empty)",
        # limit=100 on a store of 101: the status page misses the animal cut off, which is listed nowhere.
        ("list.status.found",),
    ),
    _fault(
        "list_empty_past_store",
        "list.limit.fills",
        LIST_PAGINATED,
        "answers an empty page when limit exceeds the number of matching animals",
        LIST_VIEW,  # a complete view is exactly a page larger than the store: it comes back empty
        needs_complete_view=True,  # on a store of 400 no limit exceeds the matching animals
    ),
    _fault(
        "list_cap_inconsistent",
        "list.limit.fills",
        LIST_PAGINATED,
        "caps pages at 3 for limits under 10 but not above (limit=7 gives 3, limit=20 gives 20)",
    ),
    _fault(
        "list_repeats_animal",
        "list.page.distinct",
        ID_ROW,
        "on a full page, lists its first animal again in place of the last",
    ),
    # GET /pets: status
    _fault("list_ignores_status", "list.status.filter", STATUS_FILTER_ROW, "ignores the status filter"),
    _fault("list_ignores_status_sold", "list.status.filter", STATUS_FILTER_ROW, "ignores the status filter for 'sold'"),
    _fault(
        "list_ignores_status_without_limit",
        "list.status.filter",
        STATUS_FILTER_ROW,
        "ignores the status filter when no limit is given",
    ),
    _fault(
        "list_filter_leaks_over_100",
        "list.status.filter",
        STATUS_FILTER_ROW,
        "once the store holds more than 100 animals, every filtered page also lists the newest animal",
        ("list.status.found", *LIST_COUNT),  # the filtered page is no longer the matching subset
    ),
    _fault(
        "list_hides_newest",
        "list.status.found",
        STATUS_FILTER_ROW,
        "never lists the animal created last",
        LIST_COUNT,
        needs_complete_view=True,
    ),
    _fault(
        "list_forgets_after_100",
        "list.status.found",
        STATUS_FILTER_ROW,
        "never lists animals created after the 100th",
        LIST_COUNT,
        needs_complete_view=True,
    ),
    _fault(
        "list_500_on_unknown_status",
        "list.status.invalid",
        STATUS_FILTER_ROW,
        "answers 500 to an unknown status",
        SERVER_ERROR,
    ),
    # POST /pets: success
    _fault("create_returns_200", "create.created", CREATE_201, "answers 200 instead of 201"),
    _fault("create_rejects_sold", "create.created", CREATE_201, "rejects a valid NewPet whose status is 'sold'"),
    _fault("create_truncates_long_name", "create.echo", PET_HAS_NEWPET, "truncates names to 50 characters", ECHO),
    _fault("create_ascii_names", "create.echo", PET_HAS_NEWPET, "replaces non-ASCII characters with '?'", ECHO),
    _fault(
        "create_category_float_precision",
        "create.echo",
        PET_HAS_NEWPET,
        "stores categoryId as a double (loses int64 precision)",
        ECHO,
    ),
    _fault(
        "create_category_int32",
        "create.echo",
        PET_HAS_NEWPET,
        "stores categoryId in 32 bits (values beyond 2^31 wrap)",
        ECHO,
    ),
    _fault(
        "create_negative_category_abs",
        "create.echo",
        PET_HAS_NEWPET,
        "stores a negative categoryId as its absolute value (an unsigned column)",
        ECHO,
    ),
    _fault(
        "create_escapes_html_in_name",
        "create.echo",
        PET_HAS_NEWPET,
        "stores names HTML-escaped (< becomes &lt;)",
        ECHO,
    ),
    _fault("create_ignores_status", "create.echo", PET_HAS_NEWPET, "stores every new animal as 'available'", ECHO),
    _fault("create_strips_name", "create.echo", PET_HAS_NEWPET, "strips surrounding whitespace from names", ECHO),
    _fault("create_id_reused", "create.id", ID_ROW, "hands out ids 1, 2, 3 again and again", ID_TWICE),
    _fault(
        "create_ids_repeat_after_100",
        "create.id",
        ID_ROW,
        "after 100 animals, hands out the first ids again",
        ID_TWICE,
        needs_complete_view=True,  # on a store of 400 the repeated ids are old animals the suite never saw
    ),
    _fault(
        "create_id_string",
        "create.id",
        ID_ROW,
        "sends the new id as a string",
        ("create.created", *ROUND_TRIP),  # the 201 body is no longer a Pet
    ),
    _fault(
        "create_id_beyond_int64",
        "create.id",
        ID_ROW,
        "hands out ids above 2^63-1",
        # every answer carrying such an id is not a Pet
        ("create.created", "list.shape", "read.found", *ROUND_TRIP),
    ),
    _fault(
        "create_honours_client_id",
        "create.id.assigned",
        ID_ROW,
        "stores the animal under an unused int64 id the client sent in the body",
    ),
    _fault(
        "create_default_status_null",
        "create.default-status",
        STATUS_FIELD_ROW,
        "answers status null when none was given",
        NON_PET_STATUS,
    ),
    _fault(
        "create_default_status_unknown",
        "create.default-status",
        STATUS_FIELD_ROW,
        "answers status 'new' when none was given",
        NON_PET_STATUS,
    ),
    # POST /pets: rejections
    _fault("create_accepts_missing_name", "create.reject.required", CREATE_REQUIRED, "creates an animal without name"),
    _fault(
        "create_accepts_missing_category",
        "create.reject.required",
        CREATE_REQUIRED,
        "creates an animal without categoryId",
    ),
    _fault("create_coerces_string_category", "create.reject.types", CREATE_400, 'accepts categoryId "5" as 5'),
    _fault("create_accepts_float_category", "create.reject.types", CREATE_400, "accepts a fractional categoryId"),
    _fault("create_accepts_bool_category", "create.reject.types", CREATE_400, "accepts categoryId true as 1"),
    _fault("create_coerces_name", "create.reject.types", CREATE_400, "accepts a non-string name and stringifies it"),
    _fault(
        "create_accepts_unknown_status",
        "create.reject.status",
        STATUS_VALUES,
        "accepts a status outside PetStatus",
        NON_PET_STATUS,
    ),
    _fault(
        "create_accepts_status_any_case",
        "create.reject.status",
        STATUS_VALUES,
        "accepts 'Available' or 'SOLD' and stores it lower-cased",
    ),
    _fault("create_accepts_null_status", "create.reject.status", STATUS_VALUES, "accepts status null", NON_PET_STATUS),
    _fault(
        "create_500_on_invalid_json",
        "create.reject.json",
        CREATE_400_TABLE,
        "answers 500 to a body not JSON",
        SERVER_ERROR,
    ),
    _fault(
        "create_500_on_non_object",
        "create.reject.json",
        CREATE_400_TABLE,
        "answers 500 to an array or scalar",
        SERVER_ERROR,
    ),
    _fault(
        "create_500_on_empty_body", "create.reject.json", CREATE_400_TABLE, "answers 500 to an empty body", SERVER_ERROR
    ),
    _fault(
        "create_rejected_still_stored",
        "create.reject.nothing-created",
        CREATE_400,
        "answers 400 to an invalid body that has a string name, but stores an animal anyway",
        needs_complete_view=True,
    ),
    # GET /pets/{petId}
    _fault("read_forgets_pets", "read.found", READ_PETID, "answers 404 for every id", ROUND_TRIP),
    _fault("read_drops_status", "read.found", READ_200, "leaves status out of the animal it returns", ROUND_TRIP),
    _fault("read_off_by_one", "read.found", READ_PETID, "returns the animal with the next id", ROUND_TRIP),
    _fault(
        "read_wrong_animal_after_50",
        "read.found",
        READ_PETID,
        "once more than 50 animals exist, returns the animal created before the one asked for",
        ROUND_TRIP,
    ),
    _fault(
        "read_changes_name",
        "read.found",
        READ_200,
        "returns the name upper-cased (the name changed between write and read)",
        ROUND_TRIP,
    ),
    _fault(
        "read_404_for_newest",
        "read.found",
        READ_PETID,
        "answers 404 for the animal created last (reads lag behind writes)",
        ROUND_TRIP,
    ),
    _fault(
        "read_unknown_placeholder",
        "read.not-found",
        READ_404,
        "answers 200 with a placeholder animal for unknown and malformed ids",
    ),
    _fault(
        "read_unknown_400",
        "read.not-found",
        READ_404,
        "answers 400 instead of 404 for unknown ids",
        needs_complete_view=True,  # a 400 to an id outside int64 is fair; only unused int64 ids tell
    ),
    _fault(
        "read_invents_future_ids",
        "read.not-found",
        READ_404,
        "answers 200 with an invented animal for an int64 id above every id handed out",
        needs_complete_view=True,  # only a suite that sees every id can know one was not handed out
    ),
    _fault("read_no_deprecation", "read.deprecation", READ_DEPRECATED, "sends no Deprecation header"),
    _fault(
        "read_deprecation_http_date",
        "read.deprecation",
        READ_DEPRECATED,
        "sends Deprecation as an HTTP-date, not @<seconds>",
    ),
    _fault("read_deprecation_boolean", "read.deprecation", READ_DEPRECATED, "sends 'Deprecation: true'"),
    _fault(
        "read_deprecation_even_ids",
        "read.deprecation",
        READ_DEPRECATED,
        "leaves the Deprecation header out for even ids",
    ),
    _fault("read_sunset_wrong_day", "read.sunset", READ_REMOVED, "sends a Sunset of 5 December 2031"),
    _fault(
        "read_sunset_day_before",
        "read.sunset",
        READ_REMOVED,
        "sends a Sunset of 4 December 2030 23:00 GMT (midnight CET, converted)",
    ),
    _fault(
        "read_sunset_before_deprecation",
        "read.sunset",
        RFC9745_SUNSET,
        "sends a Deprecation date after the Sunset",
    ),
    _fault("read_sunset_not_http_date", "read.sunset", READ_REMOVED, "sends Sunset as 2030-12-05"),
    # Authentication: a missing key
    _fault("auth_open_list", "auth.missing", AUTH_401, "serves GET /pets without credentials"),
    _fault("auth_open_create", "auth.missing", AUTH_401, "serves POST /pets without credentials"),
    _fault("auth_open_read", "auth.missing", AUTH_401, "serves GET /pets/{petId} without credentials"),
    _fault("auth_open_orders", "auth.missing", AUTH_401, "serves GET /store/orders without credentials"),
    _fault("auth_missing_403", "auth.missing", AUTH_401, "answers 403 instead of 401 when no key is sent"),
    _fault(
        "auth_create_validates_first",
        "auth.missing",
        AUTH_401,
        "POST /pets without a key: validates the body first (400 to an invalid body, 401 to a valid one)",
    ),
    _fault(
        "auth_list_validates_first",
        "auth.missing",
        AUTH_401,
        "GET /pets without a key: validates limit and status first (400 to an invalid one)",
    ),
    # Authentication: a wrong key or the key in the wrong form
    _fault("auth_any_key", "auth.invalid", AUTH_FORM, "accepts any bearer token"),
    _fault("auth_empty_token", "auth.invalid", AUTH_FORM, "accepts an empty bearer token"),
    _fault("auth_key_prefix", "auth.invalid", AUTH_FORM, "accepts any non-empty prefix of the key"),
    _fault("auth_key_case_insensitive", "auth.invalid", AUTH_FORM, "compares the key case-insensitively"),
    _fault("auth_key_extra_char", "auth.invalid", AUTH_FORM, "accepts the key with one character added at the end"),
    _fault("auth_accepts_basic", "auth.invalid", AUTH_FORM, "accepts any token under the Basic scheme"),
    _fault("auth_any_scheme", "auth.invalid", AUTH_FORM, "accepts the key under any scheme (e.g. 'Token <key>')"),
    _fault("auth_accepts_bare_key", "auth.invalid", AUTH_FORM, "accepts the key with no scheme"),
    _fault("auth_accepts_query_key", "auth.invalid", AUTH_FORM, "accepts the key in an access_token query parameter"),
    _fault("auth_accepts_api_key_param", "auth.invalid", AUTH_FORM, "accepts the key in an api_key query parameter"),
    _fault(
        "auth_accepts_x_api_key",
        "auth.invalid",
        AUTH_FORM,
        "accepts the key in an X-API-Key header when Authorization is absent",
    ),
    _fault("auth_orders_any_token", "auth.invalid", AUTH_FORM, "GET /store/orders accepts any bearer token"),
    _fault("auth_403", "auth.invalid", AUTH_401, "answers 403 instead of 401 to a wrong key"),
    # Authentication: the valid key refused
    _fault(
        "auth_read_rejects_valid_key",
        "auth.accepted",
        AUTH_EVERY,
        "GET /pets/{petId} answers 401 to the valid key",
        NO_READS,
    ),
    _fault(
        "auth_orders_rejects_valid_key",
        "auth.accepted",
        AUTH_EVERY,
        "GET /store/orders answers 401 to the valid key",
        ("orders.available",),  # the authorised client is turned away
    ),
    _fault("auth_case_sensitive_scheme", "auth.scheme-case", RFC9110_SCHEME, "rejects 'bearer' in lower case"),
    _fault("auth_no_challenge", "auth.challenge", RFC9110_CHALLENGE, "sends no WWW-Authenticate header with 401"),
    _fault("auth_basic_challenge", "auth.challenge", RFC9110_CHALLENGE, "challenges with Basic instead of Bearer"),
    _fault(
        "auth_orders_no_challenge",
        "auth.challenge",
        RFC9110_CHALLENGE,
        "sends no WWW-Authenticate header with the 401s of GET /store/orders only",
    ),
    # Errors and content types
    _fault("error_status_string", "errors.body", ERROR_STATUS, "sends the Error status as a string"),
    _fault("error_missing_code", "errors.body", ERROR_BODY, "leaves code out of Error bodies"),
    _fault("error_status_mismatch", "errors.body", ERROR_STATUS, "says status 400 in the body of a 404"),
    _fault("error_message_null", "errors.body", ERROR_BODY, "sends message null in Error bodies"),
    _fault("list_text_plain", "json.content-type", JSON_BODIES, "labels the list as text/plain"),
    _fault("error_html_content_type", "json.content-type", JSON_BODIES, "labels Error bodies as text/html"),
    # Odd input that only generated data tends to reach
    _fault(
        "create_500_on_control_chars",
        "responses.documented",
        CREATE_400,
        "answers 500 to a name holding a control character",
        # a generated invalid body with a control character also gets the 500 instead of its 400
        ("create.reject.types", "create.reject.required", "create.reject.status"),
        generated_only=True,
    ),
    _fault(
        "list_500_on_filtered_small_page",
        "list.limit.accepted",
        LIST_200,
        "answers 500 to a status filter with limit under 10",
        ("responses.documented",),  # a 5xx to a valid query also breaks "never a 5xx"
    ),
    _fault(
        "read_500_on_negative_id",
        "read.not-found",
        READ_404,
        "answers 500 to a negative int64 petId (an id it never handed out)",
        ("responses.documented",),  # a 5xx also breaks "never a 5xx"
    ),
    _fault(
        "read_by_name_collision",
        "stateful.round-trip",
        READ_PETID,
        "reads back the first animal with the same name",
        ("read.found",),  # the read answers another animal whenever two share a name
        generated_only=True,
    ),
    # GET /store/orders
    _fault("orders_404", "orders.available", ORDERS_EXIST, "answers 404 to GET /store/orders"),
    _fault("orders_500", "orders.available", ORDERS_EXIST, "answers 500 to GET /store/orders", SERVER_ERROR),
)

FAULTS: dict[str, Fault] = {fault.name: fault for fault in _CATALOG}
if len(FAULTS) != len(_CATALOG):  # pragma: no cover - a catalog edit gone wrong
    raise RuntimeError("two faults share a name")
