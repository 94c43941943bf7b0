"""§4.1 List all animals: GET /pets with limit (1..100, default 20) and the status filter.

Every page of a grid of queries (status: none or each PetStatus, limit: none, 1, 2, 5, 20, 100)
is asked for once, side by side, after set-up; each clause is then judged over the whole grid
with the page arithmetic of ``petstore_contract.judging.store``.
"""

from __future__ import annotations

from typing import Any

import pytest

from petstore_contract.core.records import EMPTY_STORE, PRECONDITION, STORE_TOO_LARGE, Mismatch, undecided
from petstore_contract.interface.clauses import CLAUSE_IDS
from petstore_contract.judging import expect, store
from petstore_contract.judging.declaration import Kind
from petstore_contract.judging.expect import Judge
from petstore_contract.judging.model import differs
from petstore_contract.run import Run, ahead, looks
from petstore_contract.run.ahead import sent_ahead
from petstore_contract.run.api import Request, Row, Unanswered, answers_from_data, send_table
from petstore_contract.run.setup import GRID, Grid, Seeded
from petstore_contract.transport import Answer

# Out-of-range or malformed limits: §8 gives the bounds, not the answer to values outside them,
# so a 4xx Error (reject) and a 200 within the bounds (clamp, or ignore) both honour it.
INVALID_LIMITS = ["0", "-1", "101", "1000", "1.5", "abc", "", "1e2", "0x10", "9223372036854775808"]
UNKNOWN_STATUSES = ["unknown", "AVAILABLE", "", "available,sold", "null"]
REJECTIONS = (400, 422)
MAXIMUM_LIMITS = ["101", "500", "1000"]  # limit=100 itself: list.limit.honoured

NO_GRID = "no page of the list grid answered a JSON array"  # a store never listed: not known empty or small
Query = tuple[str | None, int | None]
LIMITED = [q for q in GRID if q[1] is not None]
FILTERED = [q for q in GRID if q[0] is not None]


def _page(grid: Grid, judge: Judge, query: Query, clause: str, queries: list[Query]) -> store.Page | None:
    """The page ``query`` answered as a JSON array, whatever its items (``Grid.arrays``: a page's length,
    each item's status and id are there even where an item is no Pet).  None: nothing to judge on this
    exchange (a refused query is list.limit.accepted's, a body that is no array list.shape's), ``clause``
    decided on the other ``queries``; undecided, blocked by that clause, only where none of them is one."""
    page = grid.arrays.get(query)
    if page is not None:
        return page
    answer = grid.answers[query]
    if isinstance(answer, Unanswered):
        judge.unanswered(clause, answer.problem)
        return None
    if any(q in grid.arrays for q in queries):
        judge.nothing_to_judge(clause)
        return None
    where = store.Page(query[0], query[1], ()).query()
    blocker = (
        CLAUSE_IDS.list_limit_accepted if answer.status != 200 and query != (None, None) else CLAUSE_IDS.list_shape
    )
    reason = f"{where} answered HTTP {answer.status} with no JSON array, as did every page this clause is judged on"
    raise undecided(clause, PRECONDITION, reason, blocked_by=blocker)


def _grid_params(clause: str) -> list[Any]:
    return [pytest.param(q, id=store.Page(q[0], q[1], ()).query().replace("GET /pets", "pets") or "pets") for q in GRID]


@pytest.mark.clause(CLAUSE_IDS.list_shape)
@pytest.mark.parametrize("query", _grid_params(CLAUSE_IDS.list_shape))
def test_list_is_an_array_of_pets(grid: Grid, judge: Judge, query: tuple[str | None, int | None]) -> None:
    answer = grid.answers[query]
    if answer.status != 200 and (query[1] is not None or query[0] is not None):
        with judge(CLAUSE_IDS.list_limit_accepted):  # a valid query refused: acceptance, not the list's shape
            expect.status(answer, 200)
        judge.nothing_to_judge(CLAUSE_IDS.list_shape)  # no list to judge here: the grid's other pages decide it
        return
    with judge(CLAUSE_IDS.list_shape):
        expect.pet_list(answer, grid.admitted)
    with judge(CLAUSE_IDS.json_content_type):
        expect.json_media_type(answer)


@pytest.mark.clause(CLAUSE_IDS.list_item_same)
def test_a_listed_animal_is_the_animal_read_alone(grid: Grid, judge: Judge) -> None:
    """§2/§4.3: one id names one animal; a list shows it as GET /pets/{petId} does (a sample spread over
    every page of the grid, other clients' animals included: nothing here needs the suite's own)."""
    compared = 0
    for pet_id, read in grid.samples.items():
        alone = _read_alone(read)
        if alone is None:
            continue  # not found, or no Pet: read.found's (the pipeline judges every read)
        with judge(CLAUSE_IDS.list_item_same):
            for page in grid.arrays.values():
                for item in (item for item in page.pets if item.get("id") == pet_id and store.pet_id(item["id"])):
                    # Only the fields the item shows as a Pet's: one absent or invalid is list.shape's.
                    shown = store.readable(item)
                    field = differs({name: alone[name] for name in shown if name in alone}, shown)
                    if field is not None:
                        where = page.query()
                        raise Mismatch(
                            f"animal {pet_id} in {where} as GET /pets/{pet_id} shows it: {field}={alone.get(field)!r}",
                            f"{field}={item.get(field, '<absent>')!r}",
                            read.exchange,
                            Kind.SAME_ANIMAL.expectation(field),
                        )
        compared += 1
    if not grid.arrays:  # only what the run saw: a store never listed is not an empty one
        raise undecided(CLAUSE_IDS.list_item_same, PRECONDITION, NO_GRID, blocked_by=CLAUSE_IDS.list_shape)
    if not compared and any(store.unnamed(page) for page in grid.arrays.values()) and not grid.samples:
        reason = "no item of the grid's pages has an int64 id: none names an animal to read alone"
        raise undecided(CLAUSE_IDS.list_item_same, PRECONDITION, reason, blocked_by=CLAUSE_IDS.list_shape)
    if not compared and grid.samples:  # each read alone is read.found's (the pipeline judges every read)
        reason = f"none of the {len(grid.samples)} animals the grid listed was found as a Pet by GET /pets/{{petId}}"
        raise undecided(CLAUSE_IDS.list_item_same, PRECONDITION, reason, blocked_by=CLAUSE_IDS.read_found)
    if not compared:
        raise undecided(CLAUSE_IDS.list_item_same, EMPTY_STORE, "the grid listed no animal with an id to read alone")


def _read_alone(read: Row) -> dict[str, Any] | None:
    if read.status != 200:
        return None
    try:
        return expect.pet(expect.parse_json(read), "the animal read", read.exchange)
    except Mismatch:
        return None


@pytest.mark.clause(CLAUSE_IDS.list_limit_accepted)
@pytest.mark.parametrize("limit", [1, 100])
def test_limit_bounds_are_accepted(grid: Grid, judge: Judge, limit: int) -> None:
    with judge(CLAUSE_IDS.list_limit_accepted):
        expect.status(grid.answers[(None, limit)], 200)


@pytest.mark.clause(CLAUSE_IDS.list_limit_honoured)
@pytest.mark.parametrize("query", [q for q in _grid_params("x") if q.values[0][1] is not None])
def test_never_more_than_limit(grid: Grid, judge: Judge, query: tuple[str | None, int]) -> None:
    page = _page(grid, judge, query, CLAUSE_IDS.list_limit_honoured, LIMITED)
    if page is None:
        return
    with judge(CLAUSE_IDS.list_limit_honoured):
        if page.size > query[1]:
            raise Mismatch(f"at most {query[1]} animals", f"{page.size} animals", grid.answers[query].exchange)


@pytest.mark.clause(CLAUSE_IDS.list_limit_fills)
@pytest.mark.parametrize("query", [q for q in _grid_params("x") if q.values[0][1] is not None])
def test_page_is_as_full_as_store_and_cap_allow(grid: Grid, judge: Judge, query: tuple[str | None, int]) -> None:
    page = _page(grid, judge, query, CLAUSE_IDS.list_limit_fills, LIMITED)
    if page is None:
        return
    least = store.least_size(page, grid.known, grid.cap_seen)
    with judge(CLAUSE_IDS.list_limit_fills):
        if page.size < least:
            raise Mismatch(
                f"at least {least} animals (limit {query[1]}, {grid.known.count(query[0])} matching animals "
                f"known to exist, pages of {grid.cap_seen} seen)",
                f"{page.size} animals",
                grid.answers[query].exchange,
            )


@pytest.mark.clause(CLAUSE_IDS.deprecation_scope)
def test_the_replacement_is_not_deprecated(grid: Grid, judge: Judge) -> None:
    """§9.3: clients use GET /pets instead of the deprecated GET /pets/{petId}: GET /pets itself is current."""
    for answer in grid.answers.values():
        with judge(CLAUSE_IDS.deprecation_scope):
            expect.not_deprecated(answer)


@pytest.mark.clause(CLAUSE_IDS.list_limit_default)
@pytest.mark.parametrize("status", store.FILTERS, ids=lambda s: f"status={s}")
def test_no_limit_answers_as_limit_20(grid: Grid, judge: Judge, status: str | None) -> None:
    pair = [(status, None), (status, 20)]
    default, twenty = (_page(grid, judge, q, CLAUSE_IDS.list_limit_default, pair) for q in pair)
    if default is None or twenty is None:
        return
    answer = grid.answers[(status, None)]
    # min(20, n, C) for n matching animals and a page cap C: at least the animals known to match, so far
    # as the largest page seen and the default of 20 allow (a page of 5 on 15 known matches is short).
    least = min(20, grid.known.count(status), max(grid.cap_seen, 1))
    with judge(CLAUSE_IDS.list_limit_default):
        if default.size > 20:
            raise Mismatch("at most 20 animals without limit (the default)", f"{default.size}", answer.exchange)
        if default.size < least:
            raise Mismatch(
                f"at least {least} animals without limit (default 20; {grid.known.count(status)} matching animals "
                f"known to exist, pages of {grid.cap_seen} seen)",
                f"{default.size} animals",
                answer.exchange,
            )
        # A growing store (another client adding animals) may change a page that is not full.
        if default.size != twenty.size and max(default.size, twenty.size) >= 20:
            raise Mismatch(
                f"as many animals as {twenty.query()} ({twenty.size})", f"{default.size} animals", answer.exchange
            )


@pytest.mark.clause(CLAUSE_IDS.list_page_distinct)
@pytest.mark.parametrize("query", _grid_params("x"))
def test_page_never_repeats_an_animal(grid: Grid, judge: Judge, query: tuple[str | None, int | None]) -> None:
    page = _page(grid, judge, query, CLAUSE_IDS.list_page_distinct, GRID)
    if page is None:
        return
    with judge(CLAUSE_IDS.list_page_distinct):
        repeated = store.duplicates(page)
        if repeated:
            raise Mismatch("each animal once", f"id {repeated[0]!r} listed twice", grid.answers[query].exchange)


@pytest.mark.clause(CLAUSE_IDS.list_status_filter)
@pytest.mark.parametrize("query", [q for q in _grid_params("x") if q.values[0][0] is not None])
def test_status_filter_returns_only_that_status(grid: Grid, judge: Judge, query: tuple[str, int | None]) -> None:
    page = _page(grid, judge, query, CLAUSE_IDS.list_status_filter, FILTERED)
    if page is None:
        return
    if page.size and not any(map(store.shows_status, page.pets)):
        # No item shows a status to compare (none is a JSON object with a PetStatus or none): list.shape's.
        _no_status_shown(grid, judge)
        return
    with judge(CLAUSE_IDS.list_status_filter):
        wrong = store.wrong_status(page)
        if wrong:
            raise Mismatch(
                f"only animals with status {query[0]}",
                f"{len(wrong)} of {page.size} with another status, e.g. {expect.short(wrong[0])}",
                grid.answers[query].exchange,
            )


def _no_status_shown(grid: Grid, judge: Judge) -> None:
    """Nothing to judge on a page none of whose items shows a status; undecided where no status page does."""
    if any(store.shows_status(pet) for q in FILTERED if (page := grid.arrays.get(q)) for pet in page.pets):
        judge.nothing_to_judge(CLAUSE_IDS.list_status_filter)
        return
    reason = "no item of a status page is a JSON object whose status is a PetStatus or absent: no status to compare"
    raise undecided(CLAUSE_IDS.list_status_filter, PRECONDITION, reason, blocked_by=CLAUSE_IDS.list_shape)


def _own_look(seeded: Seeded, grid: Grid, status: str) -> tuple[store.Page, Answer, set[Any]] | None:
    """The status page set-up asked for right after its first own animal of each status (``looks.own_look``,
    a store seen whole), and the animals of that status known to exist then."""
    answer = answers_from_data(seeded.own_look.pages).get(f"{status}|100")
    page = looks.listed(answer, status, 100) if isinstance(answer, Answer) else None
    if page is None:
        return None  # list.shape judges the grid's pages
    return page, answer, store.Knowledge.of(list(seeded.own_look.known)).by_status[status]


@pytest.mark.clause(CLAUSE_IDS.list_status_found)
@pytest.mark.parametrize("status", store.STATUSES)
def test_status_page_is_exactly_the_matching_animals(grid: Grid, judge: Judge, seeded: Seeded, status: str) -> None:
    """Each status page of limit=100 the suite read while it knew which animals of that status exist: right
    after its first own animal of each status (a store seen whole) and in the grid.  A page seen whole
    (``store.seen_whole``: shorter than a page the run saw, or empty) lists every one of them."""
    page = _page(grid, judge, (status, 100), CLAUSE_IDS.list_status_found, [(s, 100) for s in store.STATUSES])
    if page is None:
        return
    seen = [(page, grid.answers[(status, 100)], grid.known.by_status[status])]
    seen = [own, *seen] if (own := _own_look(seeded, grid, status)) is not None else seen
    if grid.cap_seen == 0:
        raise undecided(CLAUSE_IDS.list_status_found, EMPTY_STORE, "the store lists no animal at all")
    whole = [(shown, answer, known) for shown, answer, known in seen if store.seen_whole(shown, grid.cap_seen)]
    if not whole:
        raise undecided(
            CLAUSE_IDS.list_status_found,
            STORE_TOO_LARGE,
            f"{page.query()} listed {page.size} animals: the store holds more {status} animals than one page shows",
        )
    if not any(known for _, _, known in whole):
        raise undecided(CLAUSE_IDS.list_status_found, EMPTY_STORE, f"the suite knows of no {status} animal to look for")
    hidden = []  # (missing, items that name no animal) of each look that cannot tell which animals it lists
    for shown, answer, known in whole:
        missing = sorted(known - {pet_id for pet_id in shown.ids if store.pet_id(pet_id)}, key=str)
        if not known or (missing and len(missing) <= store.unnamed(shown)):
            hidden += [(shown.query(), len(missing), store.unnamed(shown))] * bool(known)
            continue  # each missing animal may be an item whose id names none: list.shape's
        with judge(CLAUSE_IDS.list_status_found):
            if missing:
                raise Mismatch(
                    f"every {status} animal listed (the page of {shown.size} lists every match)",
                    f"{len(missing)} missing, e.g. id {missing[0]!r}",
                    answer.exchange,
                )
    if hidden and CLAUSE_IDS.list_status_found not in judge.examined:
        where, missing, unnamed = hidden[0]
        reason = f"{where} misses {missing} known animals and lists {unnamed} items whose id names no animal"
        raise undecided(CLAUSE_IDS.list_status_found, PRECONDITION, reason, blocked_by=CLAUSE_IDS.list_shape)


@sent_ahead("odd_queries")
def _odd_queries(run: Run, seeded: Seeded) -> dict[str, Row]:
    """Limits at and beyond the bounds, malformed limits, unknown statuses: one table, side by side."""
    table = {f"max-{limit}": Request("GET", "/pets", params={"limit": limit}) for limit in MAXIMUM_LIMITS}
    table |= {f"limit-{limit}": Request("GET", "/pets", params={"limit": limit}) for limit in INVALID_LIMITS}
    table |= {f"status-{status}": Request("GET", "/pets", params={"status": status}) for status in UNKNOWN_STATUSES}
    return run.once_answers("odd-queries", lambda: send_table(run.api, table))


@pytest.fixture(scope="module")
def odd_queries(run: Run, seeded: Seeded) -> dict[str, Row]:
    return ahead.answers(run, "odd_queries", seeded)


@pytest.mark.clause(CLAUSE_IDS.list_limit_maximum)
@pytest.mark.parametrize("limit", MAXIMUM_LIMITS)
def test_never_more_than_100(odd_queries: dict[str, Row], grid: Grid, seeded: Seeded, judge: Judge, limit: str) -> None:
    if not grid.arrays:  # only what the run saw: a store never listed is not a small one
        raise undecided(CLAUSE_IDS.list_limit_maximum, PRECONDITION, NO_GRID, blocked_by=CLAUSE_IDS.list_shape)
    if grid.known.count(None) <= 100 and grid.cap_seen <= 100 and seeded.repeated:
        reason = (
            f"{len(seeded.repeated)} ids were handed out twice: the suite knows of {grid.known.count(None)} distinct "
            "animals, and more than 100 are needed for a page that could exceed 100"
        )
        raise undecided(CLAUSE_IDS.list_limit_maximum, PRECONDITION, reason, blocked_by=CLAUSE_IDS.create_id)
    # The animals known to exist: those set-up knows of, or as many as the grid's pages show (the larger).
    if max(grid.known.count(None), store.distinct_ids([*grid.arrays.values()])) <= 100 and grid.cap_seen <= 100:
        reason = "the suite knows of 100 animals or fewer, and no page showed more: no page can exceed 100"
        raise undecided(CLAUSE_IDS.list_limit_maximum, EMPTY_STORE, reason)
    answer = odd_queries[f"max-{limit}"]
    with judge(CLAUSE_IDS.list_limit_maximum):
        if answer.status != 200:
            return  # rejecting a limit above the maximum honours it (list.limit.invalid judges how)
        size = _length(answer, CLAUSE_IDS.list_limit_maximum)
        if size > 100:
            raise Mismatch("at most 100 animals", f"{size} animals", answer.exchange)


def _length(answer: Answer, clause: str) -> int:
    """The length of a 200's JSON array, whatever its items (a page's length needs no Pet in each); a body
    that is no array leaves ``clause`` to list.shape."""
    page = looks.listed(answer, None, None)
    if page is None:
        raise undecided(clause, PRECONDITION, "the answer is no JSON array", blocked_by=CLAUSE_IDS.list_shape)
    return page.size


def _listed(answer: Answer, clause: str, admitted: tuple[int, ...] = ()) -> list[dict[str, Any]]:
    """The animals of a 200 list; a body that is no list of Pet leaves ``clause`` to list.shape (an animal
    made from invalid data the service accepted is its rejection clause's: ``Grid.admitted``)."""
    try:
        return expect.pet_list(answer, admitted)
    except Mismatch:
        raise undecided(
            clause, PRECONDITION, "the answer is not a list of Pet", blocked_by=CLAUSE_IDS.list_shape
        ) from None


def _rejected_or_bounded(judge: Judge, clause: str, answer: Answer) -> None:
    with judge(clause):
        expect.no_server_error(answer)
        if answer.status in REJECTIONS:
            return
        expect.status(answer, 200, *REJECTIONS)
        size = _length(answer, clause)
        if size > 100:
            raise Mismatch("a 4xx Error or at most 100 animals", f"{size} animals", answer.exchange)
    if answer.status in REJECTIONS:
        with judge(CLAUSE_IDS.errors_body):
            expect.error_body(answer)


@pytest.mark.clause(CLAUSE_IDS.list_limit_invalid)
@pytest.mark.parametrize("limit", INVALID_LIMITS)
def test_invalid_limit_is_rejected_or_bounded(odd_queries: dict[str, Row], judge: Judge, limit: str) -> None:
    _rejected_or_bounded(judge, CLAUSE_IDS.list_limit_invalid, odd_queries[f"limit-{limit}"])


@pytest.mark.clause(CLAUSE_IDS.list_status_invalid)
@pytest.mark.parametrize("status", UNKNOWN_STATUSES)
def test_unknown_status_is_rejected_or_ignored(
    odd_queries: dict[str, Row], grid: Grid, judge: Judge, status: str
) -> None:
    answer = odd_queries[f"status-{status}"]
    _rejected_or_bounded(judge, CLAUSE_IDS.list_status_invalid, answer)
    if answer.status == 200:
        with judge(CLAUSE_IDS.list_status_invalid):
            items = _listed(answer, CLAUSE_IDS.list_status_invalid, grid.admitted)
            odd = [p for p in items if p.get("status") not in (*store.STATUSES, None) and p["id"] not in grid.admitted]
            if odd:
                raise Mismatch("valid animals only", f"status {odd[0].get('status')!r}", answer.exchange)
