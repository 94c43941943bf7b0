"""The fault catalog: named defects the reference server can be started with.

Each fault breaks exactly one clause of the registry (``clauses.toml``) and leaves the
server otherwise conformant.  The self-test runs the contract suite against every
fault and demands that a failing test names the fault's clause.  ``generated_only``
marks faults that only the generated (Schemathesis) tests are expected to find: they
show what property-based testing adds to the targeted cases.

To add a fault: add a row here, then make ``reference/app.py`` misbehave when
``self.has(<name>)`` is true, at the one place the clause is decided.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Fault:
    name: str
    clause: str
    description: str
    generated_only: bool = False


_ROWS: tuple[tuple[str, str, str], ...] = (
    # GET /pets: shape
    ("list_wraps_array", "list.shape", 'wraps the list in an object {"items": [...]}'),
    ("list_item_id_string", "list.shape", "sends list item ids as strings"),
    ("list_item_status_uppercase", "list.shape", "sends list item status upper-cased (AVAILABLE)"),
    ("list_item_missing_category", "list.shape", "drops categoryId from list items"),
    # GET /pets: limit
    ("list_rejects_limit_100", "list.limit.accepted", "treats 100 as out of range (exclusive maximum)"),
    ("list_rejects_limit_1", "list.limit.accepted", "treats 1 as out of range (exclusive minimum)"),
    ("list_ignores_limit", "list.limit.honoured", "ignores limit and returns the default page"),
    ("list_limit_off_by_one", "list.limit.honoured", "returns limit + 1 animals"),
    ("list_default_50", "list.limit.default", "returns up to 50 animals when limit is absent"),
    ("list_no_maximum", "list.limit.maximum", "accepts limit up to 1000"),
    ("list_500_on_non_integer_limit", "list.limit.invalid", "answers 500 to a non-integer limit"),
    ("list_zero_limit_returns_all", "list.limit.invalid", "treats limit=0 as 'no limit'"),
    ("list_500_on_negative_limit", "list.limit.invalid", "answers 500 to a negative limit"),
    # GET /pets: status
    ("list_ignores_status", "list.status.filter", "ignores the status filter"),
    ("list_ignores_status_sold", "list.status.filter", "ignores the status filter for 'sold' only"),
    ("list_hides_newest", "list.status.found", "never lists the animal created last"),
    ("list_500_on_unknown_status", "list.status.invalid", "answers 500 to an unknown status"),
    # POST /pets: success
    ("create_returns_200", "create.created", "answers 200 instead of 201"),
    ("create_rejects_sold", "create.created", "rejects a valid NewPet whose status is 'sold'"),
    ("create_truncates_long_name", "create.echo", "silently truncates names to 50 characters"),
    ("create_ascii_names", "create.echo", "replaces non-ASCII characters in names with '?'"),
    ("create_category_float_precision", "create.echo", "stores categoryId as a double (loses int64 precision)"),
    ("create_ignores_status", "create.echo", "stores every new animal as 'available'"),
    ("create_strips_name", "create.echo", "strips surrounding whitespace from names"),
    ("create_id_reused", "create.id", "hands out ids 1, 2, 3 again and again"),
    ("create_id_string", "create.id", "sends the new id as a string"),
    ("create_id_beyond_int64", "create.id", "hands out ids above 2^63-1"),
    ("create_default_status_null", "create.default-status", "answers status null when none was given"),
    ("create_default_status_unknown", "create.default-status", "answers status 'new' when none was given"),
    # POST /pets: rejections
    ("create_accepts_missing_name", "create.reject.required", "creates an animal without a name"),
    ("create_accepts_missing_category", "create.reject.required", "creates an animal without categoryId"),
    ("create_coerces_string_category", "create.reject.types", 'accepts categoryId "5" as 5'),
    ("create_accepts_float_category", "create.reject.types", "accepts a fractional categoryId"),
    ("create_accepts_bool_category", "create.reject.types", "accepts categoryId true as 1"),
    ("create_coerces_name", "create.reject.types", "accepts a non-string name and stringifies it"),
    ("create_accepts_unknown_status", "create.reject.status", "accepts a status outside PetStatus"),
    ("create_accepts_null_status", "create.reject.status", "accepts status null"),
    ("create_500_on_invalid_json", "create.reject.json", "answers 500 to a body that is not JSON"),
    ("create_500_on_non_object", "create.reject.json", "answers 500 to a JSON array or scalar body"),
    ("create_500_on_empty_body", "create.reject.json", "answers 500 to an empty body"),
    # GET /pets/{petId}
    ("read_forgets_pets", "read.found", "answers 404 for every id: nothing is persisted for reading"),
    ("read_drops_status", "read.found", "leaves status out of the animal it returns"),
    ("read_off_by_one", "read.found", "returns the animal with the next id"),
    ("read_unknown_placeholder", "read.not-found", "answers 200 with a placeholder animal for unknown ids"),
    ("read_unknown_400", "read.not-found", "answers 400 instead of 404 for unknown ids"),
    ("read_no_deprecation", "read.deprecation", "sends no Deprecation header"),
    ("read_deprecation_http_date", "read.deprecation", "sends Deprecation as an HTTP-date, not @<seconds>"),
    ("read_deprecation_boolean", "read.deprecation", "sends 'Deprecation: true' (a draft's form)"),
    ("read_sunset_wrong_day", "read.sunset", "sends a Sunset of 5 December 2031"),
    ("read_sunset_before_deprecation", "read.sunset", "sends a Deprecation date after the Sunset"),
    ("read_sunset_not_http_date", "read.sunset", "sends Sunset as 2030-12-05 (not an HTTP-date)"),
    # Authentication
    ("auth_open_list", "auth.missing", "serves GET /pets without credentials"),
    ("auth_open_create", "auth.missing", "serves POST /pets without credentials"),
    ("auth_open_read", "auth.missing", "serves GET /pets/{petId} without credentials"),
    ("auth_open_orders", "auth.missing", "serves GET /store/orders without credentials"),
    ("auth_any_key", "auth.invalid", "accepts any bearer token"),
    ("auth_empty_token", "auth.invalid", "accepts an empty bearer token"),
    ("auth_accepts_basic", "auth.invalid", "accepts the key under the Basic scheme"),
    ("auth_accepts_bare_key", "auth.invalid", "accepts the key with no scheme"),
    ("auth_accepts_query_key", "auth.invalid", "accepts the key in an access_token query parameter"),
    ("auth_403", "auth.invalid", "answers 403 instead of 401 to a wrong key"),
    ("auth_case_sensitive_scheme", "auth.scheme-case", "rejects 'bearer' in lower case"),
    ("auth_no_challenge", "auth.challenge", "sends no WWW-Authenticate header with 401"),
    ("auth_basic_challenge", "auth.challenge", "challenges with Basic instead of Bearer"),
    # Errors and content types
    ("error_status_string", "errors.body", "sends the Error status as a string"),
    ("error_missing_code", "errors.body", "leaves code out of Error bodies"),
    ("error_status_mismatch", "errors.body", "says status 400 in the body of a 404"),
    ("error_message_null", "errors.body", "sends message null in Error bodies"),
    ("list_text_plain", "json.content-type", "labels the list as text/plain"),
    ("error_html_content_type", "json.content-type", "labels Error bodies as text/html"),
    # Odd input that only generated data tends to reach
    ("create_500_on_control_chars", "responses.documented", "answers 500 to a name holding a control character"),
    ("list_500_on_filtered_small_page", "responses.documented", "answers 500 to a status filter with limit under 10"),
    ("read_500_on_negative_id", "responses.documented", "answers 500 to a negative int64 petId"),
    ("read_by_name_collision", "stateful.round-trip", "reads back the first animal with the same name"),
    # GET /store/orders
    ("orders_404", "orders.available", "answers 404 to GET /store/orders"),
    ("orders_500", "orders.available", "answers 500 to GET /store/orders"),
)

GENERATED_ONLY = frozenset(
    {
        "create_500_on_control_chars",
        "list_500_on_filtered_small_page",
        "read_500_on_negative_id",
        "read_by_name_collision",
    }
)

FAULTS: dict[str, Fault] = {
    name: Fault(name, clause, description, name in GENERATED_ONLY) for name, clause, description in _ROWS
}
