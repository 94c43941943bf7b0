"""§4.2, §5.3, §7: a refused POST /pets adds no animal (create.reject.nothing-created).

Set-up sends every kind of refused create (``writeplan.rejected_bodies``); on a store seen whole it sends them
before any other write and looks at one unfiltered page right after them (``run/looks.py``).  The tests
here send a few more invalid bodies while the run goes on.  An animal shown under the name of a refused
create is a violation on any store; that none was added is known only where the store was seen whole
(``store.seen_whole``, ``store.whole_store``).
"""

from __future__ import annotations

from typing import Any

import pytest

from petstore_contract.core.records import PRECONDITION, STORE_TOO_LARGE, Mismatch, undecided
from petstore_contract.interface.clauses import CLAUSE_IDS
from petstore_contract.judging import expect, store
from petstore_contract.judging.expect import Judge
from petstore_contract.run import Run, ahead, looks
from petstore_contract.run.ahead import sent_ahead
from petstore_contract.run.api import Request, Row, answers_from_data, send_table
from petstore_contract.run.selection import PLAN
from petstore_contract.run.setup import Grid, Seeded
from petstore_contract.transport import Answer

# The part of set-up's plan of writes these tests judge (``selection.needed_writes``): its refused creates.
SET_UP_WRITES = (PLAN,)

pytestmark = pytest.mark.writes

CLAUSE = CLAUSE_IDS.create_reject_nothing_created


def _ghost_bodies(run: Run) -> dict[str, dict[str, Any]]:
    """Invalid bodies with a valid status (the same names in every process of the run)."""
    return {
        "type": {"name": run.name("ghost-type"), "categoryId": "7", "status": "sold"},
        "required": {"name": run.name("ghost-required"), "status": "sold"},
        "float": {"name": run.name("ghost-float"), "categoryId": 7.5, "status": "sold"},
    }


@sent_ahead("ghosts")
def _ghosts(run: Run, seeded: Seeded) -> dict[str, Row]:
    """The invalid bodies, then (once they are answered) the sold page and an unfiltered one."""

    def send() -> dict[str, Row]:
        posts = {key: Request("POST", "/pets", json_body=body) for key, body in _ghost_bodies(run).items()}
        lists = {
            "sold": Request("GET", "/pets", params={"status": "sold", "limit": 100}),
            "unfiltered": Request("GET", "/pets", params={"limit": 100}),
        }
        return send_table(run.api, posts) | send_table(run.api, lists)

    return run.once_answers("ghosts", send)


@pytest.fixture(scope="module")
def ghosts(run: Run, seeded: Seeded) -> dict[str, Row]:
    return ahead.answers(run, "ghosts", seeded)


def _shown(answer: Row | None, status: str | None) -> tuple[store.Page, Answer] | None:
    """A limit=100 page as listed, every item whatever its shape (an animal kept with the invalid status it
    was refused for, or none, too); None where the answer is no 200 JSON array."""
    if not isinstance(answer, Answer) or answer.status != 200:
        return None
    try:
        items = expect.parse_json(answer)
    except Mismatch:
        return None
    page = store.listed(items, status, 100)
    return (page, answer) if page is not None else None


def _set_up_looks(seeded: Seeded) -> tuple[tuple[store.Page, Answer] | None, list[tuple[store.Page, Answer]]]:
    """The unfiltered page right after the refused creates (a store seen whole), and the early look's pages."""
    after = _shown(answers_from_data(seeded.after_refusals).get(looks.AFTER_REFUSALS), None)
    early = answers_from_data(seeded.early)
    pages = [shown for status in store.FILTERS if (shown := _shown(early.get(f"{status}|100"), status))]
    return after, pages


def refusals_seen_whole(seeded: Seeded, grid: Grid) -> bool:
    """Set-up's refused creates went to a store seen whole after them: the unfiltered page right after them is
    empty, or shorter than 100 and than a page the run saw (the cap does not change); or the early look's
    status pages add up to its unfiltered page (``store.whole_store``)."""
    after, early = _set_up_looks(seeded)
    cap = max([grid.cap_seen, *(page.size for page, _ in early)])
    if after is not None and store.seen_whole(after[0], cap):
        return True
    pages = [page for page, _ in early]
    return len(pages) == len(store.FILTERS) and pages[0].status is None and store.whole_store(pages[0], pages[1:])


def _limit_100_refused(grid: Grid) -> int | None:
    """The status a refusal of every unfiltered and filtered page of 100 answered (list.limit.accepted's to
    judge), or None where one of them was answered otherwise."""
    statuses = {
        answer.status if isinstance(answer, Answer) else None
        for (_, limit), answer in grid.answers.items()
        if limit == store.LIMIT_MAX
    }
    (status,) = statuses if len(statuses) == 1 else (None,)
    return status if status is not None and 400 <= status < 500 and status != 429 else None


@pytest.mark.clause(CLAUSE)
def test_rejected_body_creates_nothing(
    ghosts: dict[str, Row], run: Run, judge: Judge, seeded: Seeded, grid: Grid
) -> None:
    """Rejected bodies carrying a valid status, then that status's page and an unfiltered one: none of them
    is listed.  Where the sold page is not the whole store, set-up's refused creates (the same kinds of
    refusal), seen whole, decide the clause (the test below); else it is undecided."""
    rejected = {body["name"] for key, body in _ghost_bodies(run).items() if ghosts[key].status == 400}
    if not rejected:
        raise undecided(CLAUSE, PRECONDITION, "no body was rejected", CLAUSE_IDS.create_reject_types)
    # Each page is read for what the clause needs (its items' names, its length), not for a valid Pet in
    # every item: an item of another shape is list.shape's to judge.
    sold, unfiltered = _shown(ghosts["sold"], "sold"), _shown(ghosts["unfiltered"], None)
    for shown in (sold, unfiltered):  # an animal shown proves the refusal kept it, on any store
        kept = [pet for pet in (shown[0].pets if shown else ()) if pet.get("name") in rejected]
        if shown and kept:
            with judge(CLAUSE):
                raise Mismatch("no animal from a rejected POST", f"listed {expect.short(kept[0])}", shown[1].exchange)
            return
    if sold is None or unfiltered is None:
        judge.nothing_to_judge(CLAUSE)  # no JSON array to count: set-up's looks decide the clause (the test below)
        return
    if store.seen_whole(sold[0], max(unfiltered[0].size, grid.cap_seen)):
        with judge(CLAUSE):
            pass  # the sold animals seen whole, and no rejected body among them
    elif not refusals_seen_whole(seeded, grid):
        raise undecided(CLAUSE, STORE_TOO_LARGE, "the sold animals fill more than one page")


@pytest.mark.clause(CLAUSE)
def test_refused_creates_add_no_animal_to_the_store_seen_whole(seeded: Seeded, grid: Grid, judge: Judge) -> None:
    """§4.2 (400 for a body "missing required fields or containing invalid values") and §5.3 (401 for a
    missing or invalid key): a refusal adds no animal.  Set-up refused creates of every kind (required
    fields, types, status, JSON, credentials, media type) while the store was small (on a store seen whole,
    before any other write), then looked at the store: no animal there under the name of one of them.
    Where no look showed the whole store, an animal a refusal added may lie past every page: undecided,
    never conforming unexamined."""
    answers = answers_from_data(seeded.rejected_answers)
    refused = {
        body["name"]: answer
        for key, body in seeded.rejected.items()
        if isinstance(body, dict) and isinstance(body.get("name"), str)
        if isinstance(answer := answers.get(key), Answer) and 400 <= answer.status < 500 and answer.status != 429
    }
    if not refused:
        raise undecided(
            CLAUSE, PRECONDITION, "set-up's invalid creates were not refused", CLAUSE_IDS.create_reject_types
        )
    after, early = _set_up_looks(seeded)
    for page, answer in [*([after] if after else []), *early]:  # an animal shown proves the refusal kept it
        kept = [pet for pet in page.pets if pet.get("name") in refused]
        if kept:
            with judge(CLAUSE):
                raise Mismatch(
                    f"no animal from a POST /pets refused with HTTP {refused[kept[0]['name']].status} (§4.2, §5.3)",
                    f"listed {expect.short(kept[0])}",
                    answer.exchange,
                )
            return
    if not refusals_seen_whole(seeded, grid):
        refused_100 = _limit_100_refused(grid)
        if refused_100 is not None:  # not a store too large: the pages that show one whole were refused
            why = (
                f"GET /pets?limit=100 answered {refused_100}: no page of 100 showed the store whole, before the "
                "writes or after the refused creates, so an animal a refusal added may lie past every page given"
            )
            raise undecided(CLAUSE, PRECONDITION, why, CLAUSE_IDS.list_limit_accepted)
        why = "the refused creates went to a store the suite could not see whole: an added animal may lie past a page"
        raise undecided(CLAUSE, STORE_TOO_LARGE, why)
    with judge(CLAUSE):
        pass  # the whole store seen after every refusal, and none of them shown
