"""Where two of the document's rules cross (issue 40): each crossing as data, judged on the clause it breaks.

- An id reaches its animal only as itself (§4.3 "petId: integer, format int64"): spellings of a held id
  that are not that int64 never answer its animal (``read.not-found``).
- One value, however JSON spells it (§2, RFC 8259): an integer as ``1e3`` or ``1000.0``, a name with
  escapes, a key given twice, the media type with a charset: accepted as that value or refused with a
  400 Error, and the value taken is the value echoed and read back (``create.echo``); bodies just past
  the size defaults of servers and proxies are refused with the Error body (``create.reject.required``).

The credential crossing (a refused credential gets its 401 whatever else the request carries) is in
``test_auth.py``'s ``CARRYING`` table; the refusal crossing (a refused create adds no animal) is the
pipeline's, for every refused create of the run (``judging/refusals.py``).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from petstore_contract.core.records import Mismatch
from petstore_contract.interface.clauses import CLAUSE_IDS
from petstore_contract.interface.silence import SILENCES
from petstore_contract.judging import expect
from petstore_contract.judging.expect import Judge
from petstore_contract.run import Run, ahead
from petstore_contract.run.ahead import sent_ahead
from petstore_contract.run.api import Request, Row, answered, send_table
from petstore_contract.run.selection import OWN
from petstore_contract.run.setup import Seeded, created_pet

# The parts of set-up's plan of writes these tests judge (``selection.needed_writes``): ids are spelled for animals
# of the suite's own; the bodies it creates are its own tables.
SET_UP_WRITES = (OWN,)

# -- an id reaches its animal only as itself (issue 40, crossing 2) ----------------------------------------

# Spellings of a held id N that are not the int64 N (§4.3 "petId: integer, format int64", a decimal
# integer): N + 2^64 (a parser that wraps at 64 bits reads N), -N, N followed by letters and N with a
# fraction other than .0 (a parser that reads the leading digits reads N); and every spelling a language's
# integer parser also takes: a base prefix (0x, 0o, 0b: Go's ParseInt and Python's int with base 0, PHP's
# intval with base 0), digit separators (1_0: the same parsers), a leading zero read as octal (C's strtol,
# Go, PHP: 012 is 10).  Spellings some parsers read as the same decimal integer (a leading +, leading zeros
# read as decimal, N.0) are left open: a leading-zero spelling may answer the animal its decimal digits
# name (``DECIMAL``), never animal N.
ALIASES = {
    "plus-2-64": lambda n: str(n + 2**64),
    "negated": lambda n: str(-n),
    "letters": lambda n: f"{n}abc",
    "fraction": lambda n: f"{n}.5",
    "hex": lambda n: f"0x{n:x}",
    "octal-prefix": lambda n: f"0o{n:o}",
    "binary": lambda n: f"0b{n:b}",
    "separator": lambda n: f"{str(n)[:1]}_{str(n)[1:]}",
    "leading-zero-octal": lambda n: f"0{n:o}",
}
DECIMAL = ("negated", "leading-zero-octal")  # spellings whose decimal reading names an animal of its own
ALIASES_ANY_ID = ("plus-2-64", "negated", "letters", "fraction", "hex", "octal-prefix", "binary")
HELD = 2  # animals whose ids are spelled otherwise: the first the suite created (or found), and the newest
# At least two digits (a separator goes between two), and 8 or more (its octal digits are no decimal N).
LEAST_HELD = 10


def _held(seeded: Seeded) -> list[int]:
    pets = seeded.own or seeded.before
    newest = (seeded.newest,) if seeded.newest is not None else ()
    ids = [pet["id"] for pet in (pets[:1] + newest + pets[-1:]) if type(pet.get("id")) is int and pet["id"] > 0]
    return list(dict.fromkeys(ids))[:HELD]


def _spellings_of(pet_id: int) -> dict[str, Any]:
    """The spellings sent for one held id (a separator and a leading zero need an id of two digits)."""
    return {name: spell for name, spell in ALIASES.items() if pet_id >= LEAST_HELD or name in ALIASES_ANY_ID}


@sent_ahead("aliases")
def _aliases(run: Run, seeded: Seeded) -> dict[str, Row]:
    table = {
        f"{pet_id}-{name}": Request("GET", f"/pets/{spell(pet_id)}")
        for pet_id in _held(seeded)
        for name, spell in _spellings_of(pet_id).items()
    }
    return run.once_answers("aliases", lambda: send_table(run.api, table))


@pytest.fixture(scope="module")
def aliases(run: Run, seeded: Seeded) -> dict[str, Row]:
    return ahead.answers(run, "aliases", seeded)


@pytest.mark.clause(CLAUSE_IDS.read_not_found, CLAUSE_IDS.errors_body)
def test_an_id_reaches_its_animal_only_as_itself(aliases: dict[str, Row], judge: Judge, seeded: Seeded) -> None:
    """Built from ids the store holds at that moment: a spelling that is not the int64 N never answers
    animal N; it gets a 404 or a 400 Error (a spelling that is no int64 names nothing the document
    describes: any 4xx HTTP fits to such a path, with the Error body), or, for -N, -N's own animal."""
    if not aliases:
        pytest.skip("no animal to read: the store holds none whose id the suite knows")
    known = {str(pet.get("id")) for pet in [*seeded.own, *seeded.before]}
    for key, answer in aliases.items():
        pet_id, _, spelling = key.partition("-")
        asked = ALIASES[spelling](int(pet_id))
        with judge(CLAUSE_IDS.read_not_found):
            if answer.status == 200:
                got = expect.parse_json(answer)
                shown = got.get("id") if isinstance(got, dict) else None
                if spelling not in DECIMAL or shown != int(asked):
                    raise Mismatch(
                        f"GET /pets/{asked} not to answer animal {pet_id} ({asked} is not the int64 {pet_id})",
                        f"HTTP 200 with {expect.short(got)}",
                        answer.exchange,
                    )
                continue
            if spelling == "negated" and asked not in known:
                expect.status(answer, 404)
            else:
                expect.status(answer, 404, *SILENCES["path"].statuses)
        judge.error_body(answer)


# -- one value, however JSON spells it (issue 40, crossing 4) ---------------------------------------------

# Raw JSON text, each body a NewPet whose value JSON spells another way: an integer as 1e3 or 1000.0 (JSON
# Schema counts both as the integer 1000), a name with escapes (the same string), a key given twice (RFC
# 8259 §4 leaves the outcome to the parser).  Each is accepted as that value, or refused with a 400
# Error (§4.2); the value the service took is the value it echoes and the value a read finds (§2, §4.3).
SPELLINGS: dict[str, tuple[str, dict[str, Any]]] = {
    "exponent-integer": ('{{"name": "{name}", "categoryId": 1e3}}', {"categoryId": 1000}),
    "fraction-integer": ('{{"name": "{name}", "categoryId": 1000.0}}', {"categoryId": 1000}),
    "escaped-name": ('{{"name": "{escaped}", "categoryId": 1}}', {"name": "{name}\u00e9"}),
    "repeated-key": ('{{"name": "{name}", "categoryId": 7, "categoryId": 8}}', {}),  # 7 or 8, held to its echo
    # A key given twice whose values differ in validity: a service whose validator reads one value and whose
    # store reads the other keeps the invalid one.  Refused (400), or created with the valid value: the one
    # JSON value a NewPet's categoryId may take (§2), echoed and read back.
    "repeated-valid-first": ('{{"name": "{name}", "categoryId": 7, "categoryId": "x"}}', {"categoryId": 7}),
    "repeated-valid-last": ('{{"name": "{name}", "categoryId": "x", "categoryId": 7}}', {"categoryId": 7}),
    # The media type spelled with a parameter is still application/json (RFC 9110 §8.3.1, RFC 8259 §11):
    # a plain NewPet, which the pipeline demands be created (201), as any plain NewPet of the suite's own.
    "charset-parameter": ('{{"name": "{name}", "categoryId": 2}}', {"categoryId": 2}),
}
# The Content-Type of each spelling (application/json but where the key says otherwise).
MEDIA_TYPES = {"charset-parameter": "application/json; charset=utf-8"}


def _spelled(run: Run) -> dict[str, tuple[str, dict[str, Any]]]:
    """Each spelling's raw body and the fields an accepting service must echo and store."""
    bodies = {}
    for key, (template, expected) in SPELLINGS.items():
        name = run.name(f"sp-{list(SPELLINGS).index(key)}")  # one name a body: a service may refuse a repeated one
        raw = template.format(name=name, escaped=name + "\\u00e9")
        bodies[key] = (
            raw,
            {field: value.format(name=name) if isinstance(value, str) else value for field, value in expected.items()},
        )
    return bodies


@sent_ahead("spellings")
def _spellings(run: Run, seeded: Seeded) -> dict[str, Row]:
    """The spelled bodies, then each animal they created read back by its id (``read-<key>``)."""

    def send() -> dict[str, Row]:
        table = {
            key: Request("POST", "/pets", data=raw, headers={"Content-Type": MEDIA_TYPES.get(key, "application/json")})
            for key, (raw, _) in _spelled(run).items()
        }
        created = send_table(run.api, table)
        pets = {key: created_pet(answer) for key, answer in answered(created).items()}
        reads = {f"read-{key}": Request("GET", f"/pets/{pet['id']}") for key, pet in pets.items() if pet is not None}
        return created | send_table(run.api, reads)

    return run.once_answers("spellings", send)


@pytest.fixture(scope="module")
def spellings(run: Run, seeded: Seeded) -> dict[str, Row]:
    return ahead.answers(run, "spellings", seeded)


def _same_value(got: Any, wanted: Any) -> bool:
    """One JSON value, however spelled: 1000 and 1000.0 are the integer 1000 (JSON Schema), never True."""
    if isinstance(wanted, int) and not isinstance(wanted, bool):
        return isinstance(got, int | float) and not isinstance(got, bool) and got == wanted
    return bool(got == wanted and type(got) is type(wanted))


@pytest.mark.writes
@pytest.mark.clause(CLAUSE_IDS.create_echo, CLAUSE_IDS.read_found, CLAUSE_IDS.create_reject_types)
@pytest.mark.parametrize("key", SPELLINGS)
def test_one_value_however_json_spells_it(spellings: dict[str, Row], run: Run, judge: Judge, key: str) -> None:
    answer = spellings[key]
    if answer.status == 400:
        with judge(CLAUSE_IDS.errors_body):
            expect.error_body(answer)
        return
    if 400 < answer.status < 500 and answer.status not in (401, 403, 429):
        # A JSON body (within the document) the service will not take gets 400 (§4.2), not 415 or 422.
        with judge(CLAUSE_IDS.create_reject_types):
            expect.status(answer, 400)
        return
    if expect.made_nothing(judge, answer, CLAUSE_IDS.create_echo):
        return
    expected = _spelled(run)[key][1]
    echoed = expect.parse_json(answer)
    read = spellings.get(f"read-{key}")
    with judge(CLAUSE_IDS.create_echo):
        if not isinstance(echoed, dict):
            raise Mismatch("the created animal", expect.short(echoed), answer.exchange)
        if key == "repeated-key":  # either value, but one: the value it took is the value it keeps
            expected = (
                {"categoryId": echoed.get("categoryId")} if echoed.get("categoryId") in (7, 8) else {"categoryId": 8}
            )
        for field, value in expected.items():
            if not _same_value(echoed.get(field), value):
                raise Mismatch(
                    f"{field} {value!r} as sent", f"{field} {expect.short(echoed.get(field))}", answer.exchange
                )
    if read is not None and read.status == 200 and isinstance(echoed, dict):
        # The value taken is the value kept: the animal read back by its id holds what its create answered
        # (read.found, as the create tests read back what they created); a field the echo already changed
        # is create.echo's, judged above.
        kept = {f: echoed[f] for f, v in expected.items() if f in echoed and _same_value(echoed[f], v)}
        with judge(CLAUSE_IDS.read_found):
            stored = expect.parse_json(read)
            for field, value in kept.items():
                if not isinstance(stored, dict) or not _same_value(stored.get(field), value):
                    shown = stored.get(field) if isinstance(stored, dict) else stored
                    raise Mismatch(
                        f"{field} {value!r}, as the create answered",
                        f"{field} {expect.short(shown)} read back",
                        read.exchange,
                    )


# -- bodies past the size defaults of servers and proxies (issue 40, crossing 4) ------------------------------

# Just past the request-size defaults of common servers and proxies: 100 KiB, 1 MiB (nginx's
# client_max_body_size), 2 MiB.  Each body is a NewPet without its categoryId, so that no compliant service
# keeps it (§4.2: 400 for a body "missing required fields"): a service refuses it with a 400 Error, or, where
# a server or proxy before it refuses the size, with a 413 Error (RFC 9110 §15.5.14); either way it carries
# the Error body (§7) and adds no animal (the pipeline holds its name against every animal shown).  Sent only
# on a store the suite sees whole, as the megabyte name is: a faulty service that keeps one would put
# megabytes on every later page of a shared store.
BIG_BODIES = {"past-100-kib": 100 * 1024 + 1, "past-1-mib": 1024 * 1024 + 1, "past-2-mib": 2 * 1024 * 1024 + 1}


def _big_body(run: Run, key: str) -> bytes:
    head = json.dumps({"name": run.name(f"big-{key[5:]}-")})[:-2]  # the run's own name, open for padding
    return (head + "B" * (BIG_BODIES[key] - len(head) - 2) + '"}').encode()


@sent_ahead("big_bodies")
def _big_bodies(run: Run, seeded: Seeded) -> dict[str, Row]:
    if seeded.crowded or run.read_only:
        return {}
    return run.once_answers(
        "big_bodies",
        lambda: send_table(run.api, {k: Request("POST", "/pets", data=_big_body(run, k)) for k in BIG_BODIES}),
    )


@pytest.fixture(scope="module")
def big_bodies(run: Run, seeded: Seeded) -> dict[str, Row]:
    return ahead.answers(run, "big_bodies", seeded)


@pytest.mark.writes
@pytest.mark.clause(CLAUSE_IDS.create_reject_required, CLAUSE_IDS.errors_body)
@pytest.mark.parametrize("key", BIG_BODIES)
def test_a_body_past_a_size_default_is_refused_with_the_error_body(
    big_bodies: dict[str, Row], judge: Judge, key: str
) -> None:
    if key not in big_bodies:
        pytest.skip("not sent to a crowded store: a faulty service would keep megabytes on a shared store's pages")
    answer = big_bodies[key]
    with judge(CLAUSE_IDS.create_reject_required):
        expect.status(answer, *SILENCES["too-large"].statuses)
    judge.error_body(answer)
