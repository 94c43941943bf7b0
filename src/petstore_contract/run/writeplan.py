"""The plan of writes: the valid NewPets the suite sends, which set-up creates before anything else.

On an empty store the suite creates about 180 animals, and a service that lists oldest first never
shows one created after the hundredth.  So every animal whose body carries a variation (each
status, no status, a client-chosen id, unusual names, values at the edges of int64, two animals
sharing a name) is created first, while the store is small enough to show it on a page of 100
whatever the service's order; the fillers that take the store past 100 come after them
(``setup.own_data``).  The create and read tests judge the answers set-up got for these bodies.

Values at the edges of what the document allows (§2: ``name`` is a string with no constraint shown;
``categoryId`` and ``petId`` are int64) are valid requests: each must be answered 201 with the value
echoed and stored exactly, or 400 with an Error body (name rules and category records are not shown,
so a service may refuse any of them).
"""

from __future__ import annotations

from petstore_contract.interface.clauses import CLAUSE_IDS, ClauseId
from petstore_contract.interface.document import INT64_MAX, INT64_MIN, STATUSES
from petstore_contract.interface.jsontypes import JsonObject, JsonValue
from petstore_contract.run import Run

CLIENT_ID = 9_007_199_254_740_993  # above 2**53: a client-chosen id no service would pick by chance
HUGE_NAME = 1_000_000  # characters: a 1 MB request, echoed and listed (see ``huge_name``)

# Plain NewPets: the service must create each (201) and echo it exactly.
PLAIN = {"available": {"status": "available"}, "pending": {"status": "pending"}, "sold": {"status": "sold"}}

# One character of every Unicode plane (0-16), none a noncharacter: planes 4-13 are unassigned and
# 15-16 private use, all of them scalar values a JSON string carries.
PLANES = "".join(chr(plane * 0x10000 + 0x20AC) for plane in range(17))
# Every C0 control character, U+0000 included, between text (a store that cuts at NUL keeps "c0:").
CONTROLS = "c0:" + "".join(chr(code) for code in range(0x20)) + ":end"

# Valid by type, but the document leaves the service free to refuse them (§2 Gaps: name rules not
# shown; category records not shown): 201 and an exact echo, or a 400 Error.
OPEN: dict[str, JsonObject] = {
    "unicode": {"name": "Ŝnuĉjo 🐶 猫 Ωmega"},
    # The whole of Unicode is a string (§2): no normalisation, folding or stripping on the way.
    "decomposed": {"name": "Cafe\u0301 Zoe\u0308 n\u0303"},  # NFD: an NFC-normalising store changes it
    "compatibility": {"name": "\ufb01ne \u2460 \uff2b \U0001d518"},  # NFKC folds each of them
    "joiners": {"name": "Rex\u200dDog\u200b\u2060"},  # zero-width joiner, space and word joiner
    "astral": {"name": "\U0001f408\u200d\u2b1b \U0001f9ae"},  # beyond the BMP (surrogate pairs in UTF-16)
    "right-to-left": {"name": "\u05e9\u05dc\u05d5\u05dd Rex \u0645\u0631\u062d\u0628\u0627"},
    "controls": {"name": "Rex\tthe\ncat"},
    "int64-max-category": {"categoryId": INT64_MAX},
    "int64-min-category": {"categoryId": INT64_MIN},
    "negative-category": {"categoryId": -5},
    "zero-category": {"categoryId": 0},
    "spaces": {"name": "  Spacey  "},
    "markup": {"name": 'O\'Brien "the" <cat> & \\dog'},
    "long-300": {"name": "L" * 300},
    "long-10000": {"name": "N" * 10_000},
    "empty": {"name": ""},
    "whitespace": {"name": "   "},
    # Value edges (principle 4 of issue 30): each alone on an empty store, so that a refusal hides
    # no other case.
    "one-char": {"name": "x"},
    "planes": {"name": PLANES},
    "c0-controls": {"name": CONTROLS},
    "long-1000000": {"name": "H" * HUGE_NAME},
    "minus-one-category": {"categoryId": -1},
    "int32-max-category": {"categoryId": 2**31 - 1},
    "int32-overflow-category": {"categoryId": 2**31},
    "beyond-double-category": {"categoryId": 2**53 + 1},
}
# On a store too large to see whole, the open cases go out merged into a few bodies (each animal
# created stays there: no delete), every case's value in one of them: a case is judged by the echo of
# its body.  A service that refuses a merged body (a name too long, say) leaves its cases undecided.
# The name of one character stays alone (merged it would be none).  The name of a million is not sent
# at all (``NOT_WHEN_CROWDED``): a crowded store is a shared one, whose every page lists what the suite
# leaves behind; one megabyte more a run would soon make its pages larger than any client (this suite's
# answer cap included) reads.  A store seen whole gets it, once: from then on it is crowded.
NOT_WHEN_CROWDED = ("long-1000000",)
OPEN_WHEN_CROWDED = {
    "text": (
        "unicode",
        "decomposed",
        "compatibility",
        "joiners",
        "astral",
        "right-to-left",
        "controls",
        "markup",
        "planes",
        "c0-controls",
        "spaces",
        "int64-max-category",
    ),
    "long-300": ("long-300", "int64-min-category"),
    "long-10000": ("long-10000", "negative-category"),
    "empty": ("empty", "zero-category"),
    "whitespace": ("whitespace", "int32-overflow-category"),
    "one-char": ("one-char", "int32-max-category"),
    "beyond-double": ("beyond-double-category",),
    "minus-one": ("minus-one-category",),
}
OPEN_GROUP = {case: group for group, cases in OPEN_WHEN_CROWDED.items() for case in cases}


def huge_name(max_body_bytes: int) -> int:
    """The longest name sent: a million characters, or what the run's answer cap (``--contract-max-body-bytes``)
    lets the suite read back in a page of 100 beside other animals (a third of the cap)."""
    return min(HUGE_NAME, max_body_bytes // 3)


def open_case(case: str, max_body_bytes: int) -> JsonObject:
    fields = OPEN[case]
    if case == "long-1000000":
        return {"name": "H" * huge_name(max_body_bytes)}
    return fields


def merged(cases: tuple[str, ...], max_body_bytes: int) -> JsonObject:
    """One body holding every case's value: names one after another ("spaces" last, so its edges stay edges)."""
    fields = [open_case(case, max_body_bytes) for case in cases]
    names = [name for f in fields if isinstance(name := f.get("name"), str)]
    body: JsonObject = {"name": "".join(names)} if names else {}
    for f in fields:
        if "categoryId" in f:
            body["categoryId"] = f["categoryId"]
    return body


def twin_bodies(name: str) -> dict[str, JsonObject]:
    """Two animals with one name (new to the run), told apart by their other fields."""
    return {
        "twin-first": {"name": name, "categoryId": 11, "status": "available"},
        "twin-second": {"name": name, "categoryId": 12, "status": "sold"},
    }


def plan_bodies(run: Run, crowded: bool) -> dict[str, JsonObject]:
    """The valid bodies of the create and read tables, by key.  On a crowded store the plain creates
    are set-up's own animals and the open cases go out merged."""
    cap = run.settings.max_body_bytes
    bodies: dict[str, JsonObject] = {}
    for status in PLAIN if not crowded else ():
        bodies[f"plain-{status}"] = run.new_pet("plain", status)
    if crowded:
        opened = {name: merged(cases, cap) for name, cases in OPEN_WHEN_CROWDED.items()}
    else:
        opened = {name: open_case(name, cap) for name in OPEN}
    for name, fields in opened.items():
        bodies[f"open-{name}"] = {**run.new_pet("open", "available"), **fields}
    bodies["client-id"] = {**run.new_pet("client-id", "pending"), "id": CLIENT_ID}
    bodies["no-status"] = run.new_pet("no-status", None)
    # No status either: a member named otherwise ("STATUS") is another member (RFC 8259 §4, §8.3), so it
    # takes the status an omitted one takes (a decoder that folds case, as Go's does, sets it).
    bodies["status-member-case"] = {**run.new_pet("status-case", None), "STATUS": "sold"}
    bodies |= twin_bodies(run.name("twin"))
    return bodies


# -- the refused creates: planned early, so that a page shows the animal a refusal still added ----------

# Bodies §4.2/§7 say to reject with 400 and an Error body, by the clause they break.  For each element of
# a NewPet, every axis on which real parsers are lenient: member names are exact strings (RFC 8259 §4,
# §8.3: "Name" is no "name"; a decoder that folds case, as Go's encoding/json does, takes it), and each
# field against every JSON type that is not its own (§2: name a string, categoryId an int64, status a
# PetStatus), ``true`` included (a loose equality takes true for any non-empty string).
REJECTED: dict[ClauseId, dict[str, JsonObject]] = {
    CLAUSE_IDS.create_reject_required: {
        "no-name": {"categoryId": 1},
        "no-categoryId": {"name": "Rex"},
        "empty-object": {},
        "name-case": {"Name": "Rex", "categoryId": 1},
        "categoryId-case": {"name": "Rex", "CategoryID": 1},
    },
    CLAUSE_IDS.create_reject_types: {
        "categoryId-string": {"name": "Rex", "categoryId": "5"},
        "categoryId-float": {"name": "Rex", "categoryId": 5.5},
        "categoryId-bool": {"name": "Rex", "categoryId": True},
        "categoryId-false": {"name": "Rex", "categoryId": False},
        "categoryId-null": {"name": "Rex", "categoryId": None},
        "categoryId-array": {"name": "Rex", "categoryId": [5]},
        "categoryId-object": {"name": "Rex", "categoryId": {"id": 5}},
        "categoryId-beyond-int64": {"name": "Rex", "categoryId": INT64_MAX + 1},
        "name-number": {"name": 123, "categoryId": 1},
        "name-fraction": {"name": 1.5, "categoryId": 1},
        "name-bool": {"name": False, "categoryId": 1},
        "name-true": {"name": True, "categoryId": 1},
        "name-null": {"name": None, "categoryId": 1},
        "name-array": {"name": ["Rex"], "categoryId": 1},
        "name-object": {"name": {"first": "Rex"}, "categoryId": 1},
    },
    CLAUSE_IDS.create_reject_status: {
        "status-unknown": {"name": "Rex", "categoryId": 1, "status": "adopted"},
        "status-case": {"name": "Rex", "categoryId": 1, "status": "Available"},
        "status-null": {"name": "Rex", "categoryId": 1, "status": None},
        "status-number": {"name": "Rex", "categoryId": 1, "status": 1},
        "status-fraction": {"name": "Rex", "categoryId": 1, "status": 1.5},
        "status-true": {"name": "Rex", "categoryId": 1, "status": True},
        "status-false": {"name": "Rex", "categoryId": 1, "status": False},
        "status-array": {"name": "Rex", "categoryId": 1, "status": ["available"]},
        "status-object": {"name": "Rex", "categoryId": 1, "status": {"value": "available"}},
    },
}
# Bodies that are no JSON object (create.reject.json).
REJECTED_RAW = {
    "array": "[]",
    "array-of-pet": '[{"name": "Rex", "categoryId": 1}]',
    "string": '"Rex"',
    "number": "42",
    "null": "null",
    "invalid-json": '{"name": "Rex", "categoryId": 1',
    "not-json": "name=Rex&categoryId=1",
    "empty": "",
}
# JSON objects whose name holds bytes that are not UTF-8: a lone 0xFF, a Latin-1 letter, a sequence cut
# short.  RFC 8259 §8.1: JSON text exchanged "MUST be encoded using UTF-8"; §9: a parser "MAY accept
# non-JSON forms".  So each is refused with a 4xx Error or taken as the service reads it (201: Go's and
# Node's decoders put U+FFFD for each byte), and never a 5xx (create.reject.json).  Not sent: the forms
# lax decoders pass through unchanged into later answers (an overlong form, an encoded UTF-16 surrogate,
# a lone "\ud800" escape; §8.2 calls its behaviour "unpredictable"), where a client could not tell a
# fault from the garbage it sent.  Text with surrogate escapes for the bytes (plain data for the run's
# processes; ``raw_bytes`` sends them).
NOT_UTF8 = {
    name: raw.decode("utf-8", "surrogateescape")
    for name, raw in {
        "byte-ff": b'{"name": "Rex \xff", "categoryId": 1}',
        "latin-1": b'{"name": "Rex M\xfcller", "categoryId": 1}',
        "cut-short": b'{"name": "Rex \xc3", "categoryId": 1}',
    }.items()
}


def raw_bytes(raw: str) -> bytes:
    """The bytes of a raw body of the plan (``REJECTED_RAW``, ``NOT_UTF8``)."""
    return raw.encode("utf-8", "surrogateescape")


# A valid NewPet refused for what it is sent with (§5.3: no key, a wrong key; §1: another media type), each
# with the run's own name: a refusal of any kind adds no animal (create.reject.nothing-created).
REFUSED_FOR: dict[str, dict[str, str | dict[str, str] | None]] = {  # the options of the request (``api.Api.request``)
    "no-key": {"authorization": None},
    "wrong-key": {"authorization": "Bearer pc-not-the-key"},
    "media-type": {"headers": {"Content-Type": "text/plain"}},
}


# Just past Express's default body limit (100 KiB), a NewPet without its categoryId: refused by every
# compliant service, with a 400 Error or (its size refused first) a 413 Error (RFC 9110 §15.5.14).  Only to
# a store seen whole: a faulty service that keeps it would put 100 KiB on every page of a shared store.
TOO_LARGE = 100 * 1024 + 1


def rejected_bodies(run: Run, crowded: bool = False) -> dict[str, JsonValue]:
    """Each refused create's body by its key (``reject-<case>``, ``raw-<case>``, ``refused-<reason>``): a
    valid name is the run's own, so that an animal a refusal still added shows under it."""
    bodies: dict[str, JsonValue] = {}
    for cases in REJECTED.values():
        for name, body in cases.items():
            named = {**body, "name": run.name(f"rej-{name}")} if body.get("name") == "Rex" else body
            bodies[f"reject-{name}"] = named
    bodies |= {f"raw-{name}": raw for name, raw in (REJECTED_RAW | NOT_UTF8).items()}
    bodies |= {f"refused-{reason}": run.new_pet(f"refused-{reason}", "sold") for reason in REFUSED_FOR}
    if not crowded:
        name = run.name("refused-size-")
        bodies["refused-too-large"] = {"name": name + "B" * (TOO_LARGE - len(name)), "status": "sold"}
    return bodies


def held_id_body(run: Run, held: JsonObject) -> JsonObject:
    """A NewPet carrying the id of an animal the run created (§2: the id is "assigned by the service on
    creation"): a service that keeps a client's id it already holds replaces that animal.  Its status and
    category are the held animal's (a replaced animal shows by its name, on its clause alone)."""
    status = held.get("status")
    body = run.new_pet("held-id", status if isinstance(status, str) and status in STATUSES else None)
    return {**body, "categoryId": held.get("categoryId", 1), "id": held["id"]}


def own_bodies(run: Run, count: int) -> list[JsonObject]:
    """Set-up's own animals, spread over the statuses (read back by the read and auth tests)."""
    return [run.new_pet(f"own-{n}", STATUSES[n % 3], categoryId=100 + n) for n in range(count)]
