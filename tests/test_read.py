"""§4.3 Get an animal (deprecated): GET /pets/{petId}, its 404, and the Deprecation/Sunset headers (§9.3)."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from petstore_contract.core.records import (
    EMPTY_STORE,
    PRECONDITION,
    STORE_TOO_LARGE,
    TARGET,
    Exchange,
    Mismatch,
    Note,
    undecided,
)
from petstore_contract.interface.clauses import CLAUSE_IDS
from petstore_contract.interface.document import STATUSES, SUNSET_DATE
from petstore_contract.interface.silence import SILENCES
from petstore_contract.interface.spec import schema_errors
from petstore_contract.judging import expect, headers, store
from petstore_contract.judging.declaration import Kind
from petstore_contract.judging.expect import Judge
from petstore_contract.run import Run, ahead
from petstore_contract.run.ahead import sent_ahead
from petstore_contract.run.api import Request, Row, Unanswered, answered, answers_from_data, send_table
from petstore_contract.run.looks import listed
from petstore_contract.run.setup import Grid, Seeded, created_pet, need_own
from petstore_contract.transport import Answer

SUNSET_DAY = headers.epoch_day(*SUNSET_DATE)  # §4.3, §9.3
MALFORMED_IDS = ["abc", "1.5", "9223372036854775808", "-9223372036854775809", "%20", "1e3", "0x1F", "null"]


def _one_read(reads: list[tuple[dict[str, Any], Row]], seeded: Seeded, clause: str, read_only: bool) -> Row:
    if not reads:
        need_own(seeded, clause, read_only)
        raise undecided(clause, "empty_store", "no animal to read")
    return reads[-1][1]


TWINS = ("twin-first", "twin-second")  # two animals with one name (set-up's plan of writes)


@sent_ahead("twins")
def _twins(run: Run, seeded: Seeded) -> dict[str, Row]:
    """Both twins as set-up created them (side by side), then each read back by the id it was given."""
    plan = {k: seeded.plan[k] for k in TWINS if k in seeded.plan}
    created = answers_from_data({k: planned.answer for k, planned in plan.items()})

    def send() -> dict[str, Row]:
        pets = {key: created_pet(answer) for key, answer in created.items()}
        reads = {f"read-{key}": Request("GET", f"/pets/{pet['id']}") for key, pet in pets.items() if pet is not None}
        return send_table(run.api, reads)

    return created | run.once_answers("twins", send)


@pytest.fixture(scope="module")
def twins(run: Run, seeded: Seeded) -> dict[str, Row]:
    return ahead.answers(run, "twins", seeded)


@pytest.mark.writes
@pytest.mark.clause(CLAUSE_IDS.read_found)
def test_an_id_names_one_animal_when_names_repeat(twins: dict[str, Row], run: Run, judge: Judge) -> None:
    """An id names one animal: a service that accepts a name twice (§2 leaves name rules open, so it
    may refuse the second) reads each animal back by its own id, not by its name."""
    if not all(key in twins for key in TWINS):
        raise undecided(CLAUSE_IDS.read_found, EMPTY_STORE, "read-only run: the suite created no twins")
    created = {key: created_pet(twins[key]) for key in TWINS}
    if None in created.values():
        return  # a name refused the second time (or nothing created: create.created judges that)
    for key, pet in created.items():
        # As the service created it (its echo is create.echo's to judge), so far as both twins differ.
        expected = {k: pet[k] for k in ("id", "name", "categoryId", "status") if k in pet}
        answer = twins[f"read-{key}"]
        with judge(CLAUSE_IDS.read_found):
            expect.status(answer, 200)
            got = expect.pet(expect.parse_json(answer), "the animal read back", answer.exchange)
            expect.same_fields(expected, got, f"GET /pets/{expected['id']}", answer.exchange)


@pytest.mark.clause(CLAUSE_IDS.read_found)
def test_each_animal_reads_back_exactly(
    reads: list[tuple[dict[str, Any], Row]], judge: Judge, seeded: Seeded, read_only: bool
) -> None:
    _one_read(reads, seeded, CLAUSE_IDS.read_found, read_only)
    for pet, answer in reads:
        with judge(CLAUSE_IDS.read_found):
            expect.status(answer, 200)
            got = expect.pet(expect.parse_json(answer), "the animal read back", answer.exchange)
            expected = {k: pet[k] for k in ("id", "name", "categoryId", "status") if k in pet}
            expect.same_fields(expected, got, f"GET /pets/{pet['id']}", answer.exchange)
        with judge(CLAUSE_IDS.json_content_type):
            expect.json_media_type(answer)


@pytest.mark.clause(CLAUSE_IDS.read_not_found)
def test_unknown_ids_are_404_with_error(judge: Judge, seeded: Seeded) -> None:
    """Ids read before the suite's own animals were created: next ones, small, huge, and (on a store
    too large to see whole) the two after the id the suite's first animal was given.  A 200 is a fault
    when the id was handed out later to the suite's own animal, or when the store, seen whole just
    before the probe and again just after it, never listed it.  An id the second look lists was handed
    out to another client in between (a busy service): it proves nothing either way."""
    # An id listed before the first write exists: handing it out again is create.id's fault, not an invention.
    listed = {str(pet.get("id")) for pet in seeded.before}
    handed_out_later = set(seeded.sent) - listed
    decided = False
    for pet_id, probe in seeded.probes.items():
        if probe.status is None:
            reason = f"GET /pets/{pet_id} was not answered: {probe.body}"
            judge.undecided(Note((CLAUSE_IDS.read_not_found,), TARGET, reason))
            continue
        with judge(CLAUSE_IDS.read_not_found):
            if probe.status == 404:
                decided = True
                continue
            exchange = probe.exchange
            if probe.status == 200:
                if pet_id in handed_out_later:
                    why = "handed out later to an animal the suite created"
                elif pet_id in seeded.listed_after_probes or not seeded.whole_after_probes:
                    continue
                else:
                    why = "not in the store, seen whole before and after"
                raise Mismatch(f"404 for id {pet_id} ({why})", f"HTTP 200 with {expect.short(probe.body)}", exchange)
            kind = Kind.STATUS.expectation("404")
            raise Mismatch(f"404 for the unknown id {pet_id}", f"HTTP {probe.status}", exchange, kind)
    if not decided and not judge.findings:
        raise undecided(
            CLAUSE_IDS.read_not_found,
            STORE_TOO_LARGE,
            "no probed id answered 404, and none could be proved unknown (the store is too large or busy)",
        )


@pytest.mark.clause(CLAUSE_IDS.read_not_found, CLAUSE_IDS.read_found)
def test_an_id_that_answers_names_one_animal(unknown: dict[str, Row], judge: Judge, seeded: Seeded) -> None:
    """A probed id that answered 200 (it may exist: the store is not seen whole), neither listed before
    the first write nor handed to the suite since, is held to what any animal is: the answer is the
    animal of the id asked for (read.found: an id names one animal), and a second read gives the same
    animal (else no stored animal answered: one invented on read, read.not-found).  An animal
    invented the same way each time is ``test_unknown_ids_are_404_with_error``'s to catch, when the
    id is handed out."""
    # An id listed before the first write exists (another animal under it later is create.id's or
    # read.found's to judge); one handed to the suite's own animal is judged by the test above.
    known = {str(pet.get("id")) for pet in seeded.before} | set(seeded.sent)
    for pet_id, probe in seeded.probes.items():
        if probe.status != 200 or pet_id in known:
            continue
        first = probe.exchange
        pet, other = {}, {}
        with judge(CLAUSE_IDS.read_found):
            pet = _probed_pet(probe.body, pet_id, first)
            again = unknown[pet_id]
            other = _probed_pet(again.text, pet_id, again.exchange) if again.status == 200 else {}
        if pet and other:
            with judge(CLAUSE_IDS.read_not_found):
                fields = ("id", "name", "categoryId")
                if [pet.get(f) for f in fields] != [other.get(f) for f in fields]:
                    raise Mismatch(
                        f"the same animal on a second read of GET /pets/{pet_id}",
                        f"{expect.short(pet)}, then {expect.short(other)}",
                        again.exchange,
                    )


def _probed_pet(body: str, pet_id: str, exchange: Exchange) -> dict[str, Any]:
    """The Pet a 200 to ``GET /pets/{pet_id}`` answered, which must be the animal of that id."""
    try:
        pet = json.loads(body)
    except (ValueError, RecursionError):
        return {}  # not JSON: the read's shape is read.found's and the generated tests' to judge
    if not isinstance(pet, dict) or "id" not in pet:
        return {}
    if pet["id"] != int(pet_id) or type(pet["id"]) is not int:
        raise Mismatch(f"the animal of id {pet_id}, or 404", f"HTTP 200 with {expect.short(pet)}", exchange)
    return pet


@pytest.mark.clause(CLAUSE_IDS.read_not_found)
def test_unknown_id_error_body(unknown: dict[str, Row], judge: Judge, seeded: Seeded) -> None:
    # The 404's body and media type are judged here; its status is the other read.not-found tests'.
    judge.nothing_to_judge(CLAUSE_IDS.read_not_found)
    rows = answered(unknown)  # in the order set-up probed them
    found = [answer for pet_id, answer in rows.items() if seeded.probes[pet_id].status == answer.status == 404]
    # With no 404, the first error answer to an id set-up probed (a 400 for an unknown id: read.not-found's
    # finding) still carries §7's Error body.
    refused = found or [answer for answer in rows.values() if 400 <= answer.status < 500]
    if refused:
        with judge(CLAUSE_IDS.errors_body):
            expect.error_body(refused[0])
        with judge(CLAUSE_IDS.json_content_type):
            expect.json_media_type(refused[0])
        return
    if rows and all(200 <= answer.status < 300 for answer in rows.values()):
        # Every probed id answered an animal: a 2xx carries no Error body, nothing to judge here.
        judge.nothing_to_judge(CLAUSE_IDS.errors_body)
        return
    raise undecided(CLAUSE_IDS.errors_body, STORE_TOO_LARGE, "no probed id answered 404")


@sent_ahead("unknown")
def _unknown(run: Run, seeded: Seeded) -> dict[str, Row]:
    """The ids set-up probed and got an answer for, asked again side by side."""
    # A probe refused otherwise than 404 (a 400, a 401) is asked again too: its Error body is still §7's.
    table = {
        pet_id: Request("GET", f"/pets/{pet_id}")
        for pet_id, probe in seeded.probes.items()
        if isinstance(status := probe.status, int) and (status == 200 or 400 <= status < 500)  # None: unanswered
    }
    return run.once_answers("unknown", lambda: send_table(run.api, table))


@pytest.fixture(scope="module")
def unknown(run: Run, seeded: Seeded) -> dict[str, Row]:
    return ahead.answers(run, "unknown", seeded)


@sent_ahead("malformed")
def _malformed(run: Run, seeded: Seeded) -> dict[str, Row]:
    table = {pet_id: Request("GET", f"/pets/{pet_id}") for pet_id in MALFORMED_IDS}
    return run.once_answers("malformed", lambda: send_table(run.api, table))


@pytest.fixture(scope="module")
def malformed(run: Run, seeded: Seeded) -> dict[str, Row]:
    return ahead.answers(run, "malformed", seeded)


@pytest.mark.clause(CLAUSE_IDS.responses_documented)
@pytest.mark.parametrize("pet_id", MALFORMED_IDS)
def test_malformed_id_is_never_a_server_error(malformed: dict[str, Row], judge: Judge, pet_id: str) -> None:
    """A petId that is no int64 names nothing the document describes: HTTP decides the answer
    (``interface/silence.py``: 400, 404, 405 or 422 with an Error body), never a 5xx."""
    answer = malformed[pet_id]
    with judge(CLAUSE_IDS.responses_documented):
        expect.no_server_error(answer)
        if answer.status >= 400 and answer.status not in (401, 403):  # a refused valid key: auth.accepted's
            expect.status(answer, *SILENCES["path"].statuses)
    if answer.status >= 400:
        with judge(CLAUSE_IDS.errors_body):
            expect.error_body(answer)


def _deprecation_holds(answer: Answer) -> None:
    problem = expect.deprecation_problem(answer.headers.get("deprecation"), answer.headers.get("date"), time.time())
    if problem is not None:
        raise Mismatch(*problem[:2], answer.exchange, problem[2])


@pytest.mark.clause(CLAUSE_IDS.read_deprecation)
def test_deprecation_header_is_an_sf_date(
    reads: list[tuple[dict[str, Any], Row]], judge: Judge, seeded: Seeded, read_only: bool
) -> None:
    _one_read(reads, seeded, CLAUSE_IDS.read_deprecation, read_only)
    for _, answer in reads:
        if isinstance(answer, Unanswered):
            judge.unanswered(CLAUSE_IDS.read_deprecation, answer.problem)
        elif answer.status == 200:
            with judge(CLAUSE_IDS.read_deprecation):
                _deprecation_holds(answer)
    statuses = sorted({answer.status for _, answer in reads if isinstance(answer, Answer)})
    if statuses and 200 not in statuses:
        reason = (
            f"no read of the suite's animals by id answered 200 (HTTP {', '.join(map(str, statuses))}: read.found's "
            "to judge), and the Deprecation header is asked of the 200 answers"
        )
        raise undecided(CLAUSE_IDS.read_deprecation, PRECONDITION, reason, blocked_by=CLAUSE_IDS.read_found)


@pytest.mark.clause(CLAUSE_IDS.read_sunset)
def test_sunset_names_5_december_2030_after_deprecation(
    reads: list[tuple[dict[str, Any], Row]], judge: Judge, seeded: Seeded, read_only: bool
) -> None:
    answer = _one_read(reads, seeded, CLAUSE_IDS.read_sunset, read_only)
    sunset = answer.headers.get("sunset")
    if sunset is None:
        # The rule is about a Sunset header when one is sent (RFC 8594 is optional): not applicable, not undecided.
        judge.warnings.append("GET /pets/{petId} sends no Sunset header (RFC 8594 §3; §9.3 names 5 December 2030)")
        judge.not_applicable(
            CLAUSE_IDS.read_sunset, "no Sunset header was sent (optional, RFC 8594): nothing for the rule"
        )
        return
    with judge(CLAUSE_IDS.read_sunset):
        when = headers.http_date_seconds(sunset)
        if when is None:
            raise Mismatch("Sunset as an IMF-fixdate HTTP-date", f"Sunset: {sunset}", answer.exchange)
        if headers.day_of(when) != SUNSET_DAY:
            raise Mismatch("Sunset on 5 December 2030 (§4.3, §9.3)", f"Sunset: {sunset}", answer.exchange)
        deprecated = answer.headers.get("deprecation", "")
        since = headers.sf_date_seconds(deprecated)
        if since is not None and when < since:
            raise Mismatch(
                "a Sunset not earlier than the Deprecation date (RFC 9745 §4)",
                f"Sunset: {sunset}, Deprecation: {deprecated}",
                answer.exchange,
            )


FIELDS = ("id", "name", "categoryId", "status")


def _looks(seeded: Seeded, grid: Grid) -> list[tuple[store.Page, Answer, bool, bool]]:
    """Every limit=100 list page the suite read after creating its animals: (page, answer, seen
    whole, fillers created before it): the early look (set-up's plan created, no filler yet) and the
    grid (the store as set-up left it)."""
    early_answers = answers_from_data(seeded.early)
    early = {
        q: (page, early_answers[f"{q[0]}|{q[1]}"])
        for q in _LOOKED
        if (page := _early_page(early_answers, q, grid.admitted))
    }
    late = {q: (grid.arrays[q], grid.answers[q]) for q in _LOOKED if q in grid.arrays}
    cap = grid.cap_seen
    looks = []
    for shown, filled in ((early, False), (late, True)):
        statuses = [shown[(s, 100)][0] for s in STATUSES if (s, 100) in shown]
        for (status, _), (page, answer) in shown.items():
            if status is None:
                whole = len(statuses) == len(STATUSES) and store.whole_store(page, statuses)
            else:
                whole = store.seen_whole(page, cap)
            looks.append((page, answer, whole, filled))
    return looks


_LOOKED = [(status, 100) for status in (None, *STATUSES)]


def _unread(seeded: Seeded, grid: Grid, looks: list[tuple[store.Page, Answer, bool, bool]]) -> tuple[str, str] | None:
    """(the blocking clause, why) where a page of 100 the suite read cannot say which animals it lists: an item
    whose id names no animal (list.shape), a body that is no JSON array (list.shape), a refused query
    (list.limit.accepted); None where every page can."""
    unnamed = sum(store.unnamed(page) for page, _, _, _ in looks)
    if unnamed:
        return CLAUSE_IDS.list_shape, f"its pages list {unnamed} items whose id names no animal"
    early = answers_from_data(seeded.early)
    for row in [*(early.get(f"{q[0]}|{q[1]}") for q in _LOOKED), *(grid.answers[q] for q in _LOOKED)]:
        if isinstance(row, Answer) and listed(row, None, 100) is None:
            blocker = CLAUSE_IDS.list_shape if row.status == 200 else CLAUSE_IDS.list_limit_accepted
            return blocker, f"GET /pets with limit=100 answered HTTP {row.status} with no JSON array"
    return None


def _early_page(answers: dict[str, Row], query: tuple[str | None, int], admitted: tuple[int, ...]) -> store.Page | None:
    """The early look's page as any JSON array (``looks.listed``: each item read for the fields it shows as
    a Pet's; the rest is list.shape's, judged on the grid's pages)."""
    row = answers.get(f"{query[0]}|{query[1]}")
    return listed(row, *query) if row is not None else None


@pytest.mark.writes
@pytest.mark.clause(CLAUSE_IDS.list_found)
def test_every_animal_created_is_listed_as_created(seeded: Seeded, grid: Grid, judge: Judge) -> None:
    """Every animal set-up created (its own, the create and read tables' bodies, the fillers) is listed
    unfiltered and under the status the service showed for it (the one it chose when none was sent),
    with the fields its create answer showed.  Set-up's plan of writes puts the animals with variations
    on a page of 100 whatever the service's order (the early look); the fillers are seen in the grid.
    Missing from a page that lists the whole store is a violation (a status page's is
    list.status.found's); an animal no page the suite read could show leaves the clause undecided.
    The one exception is the filler that takes the store past 100 (created last, read back by id):
    listed oldest first, no unfiltered page of 100 can show it, by construction."""
    pets = {i: p for i, p in seeded.created.items() if i not in seeded.repeated and not schema_errors("Pet", p)}
    if not pets:
        need_own(seeded, CLAUSE_IDS.list_found, read_only=False)
        reason = f"none of the {len(seeded.created)} animals set-up created was answered as a Pet: none to look for"
        raise undecided(CLAUSE_IDS.list_found, PRECONDITION, reason, blocked_by=CLAUSE_IDS.create_created)
    looks = _looks(seeded, grid)
    placed: set[tuple[str, str | None]] = set()
    for page, answer, _, _ in looks:
        for item in page.pets:
            pet = pets.get(str(item.get("id"))) if store.pet_id(item.get("id")) else None
            if pet is None or (page.status is not None and pet.get("status") != page.status):
                continue  # not the suite's, or under another status (list.status.filter judges that)
            placed.add((str(pet["id"]), page.status))
            with judge(CLAUSE_IDS.list_found):
                for field in (field for field in FIELDS if field not in store.unreadable(item)):
                    want, got = pet.get(field, "<absent>"), item.get(field, "<absent>")
                    if want != got or type(want) is not type(got):
                        raise Mismatch(
                            f"id {pet['id']} listed as created, {field}={expect.short(want)}",
                            f"{field}={expect.short(got)}",
                            answer.exchange,
                            f"same-field:{field}",
                        )
    newest = str((seeded.newest or {}).get("id"))
    unplaced = []
    for pet_id, pet in pets.items():
        for status in (None, pet.get("status")) if pet.get("status") in STATUSES else (None,):
            if (pet_id, status) in placed or (status is None and pet_id == newest):
                continue
            filler = pet_id in seeded.filler_ids
            wholes = [
                (p, a)
                for p, a, whole, late in looks
                if whole and p.status == status and (late or not filler) and not store.unnamed(p)
            ]  # a page with an item whose id names no animal may list it there (list.shape's)
            if not wholes:
                unplaced.append(f"id {pet_id} ({'unfiltered' if status is None else status})")
            elif status is None:
                with judge(CLAUSE_IDS.list_found):
                    page, answer = wholes[0]
                    raise Mismatch(
                        f"id {pet_id} in {page.query()}, which lists the whole store",
                        f"{page.size} animals, not it",
                        answer.exchange,
                    )
    unread = _unread(seeded, grid, looks)
    if unplaced and not judge.findings and unread is not None:
        reason = f"{len(unplaced)} of the suite's animals are on no page it read as animals, e.g. {unplaced[0]}"
        raise undecided(CLAUSE_IDS.list_found, PRECONDITION, f"{reason}: {unread[1]}", blocked_by=unread[0])
    if unplaced and not judge.findings:
        reason = f"{len(unplaced)} of the suite's animals lie past every page it read, e.g. {unplaced[0]}"
        raise undecided(CLAUSE_IDS.list_found, STORE_TOO_LARGE, reason)
