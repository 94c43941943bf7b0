"""The suite's own data on the target, and what it learns of the store before it judges it.

In a read-write run the suite creates the animals it needs, once per run (also under xdist):
two of its own per status, created when the store already holds the most it will hold during
set-up, plus fillers up to 101 animals when the store shows fewer and does not cap its pages.
Every name carries the run's seed and run id.  Read-only runs judge the store as it is.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from petstore_contract import expect, store
from petstore_contract.api import Api, Request, send_table
from petstore_contract.plugin import whole_suite_selected, will_run
from petstore_contract.record import EMPTY_STORE, PRECONDITION, Mismatch, undecided
from petstore_contract.run import Run, active_run
from petstore_contract.transport import Answer

OWN_PER_STATUS = 2
# The list grid: status (none or each PetStatus) x limit (none, 1, 2, 5, 20, 100).
GRID = [(status, limit) for status in store.FILTERS for limit in store.LIMITS]
INT64_MAX = 2**63 - 1


@dataclass
class Seeded:
    """What set-up created and learnt: plain data, shared by the run's processes."""

    own: list[dict[str, Any]] = field(default_factory=list)  # Pets as the service answered them
    sent: dict[str, dict[str, Any]] = field(default_factory=dict)  # str(id) -> the NewPet sent
    fillers: int = 0
    before: list[dict[str, Any]] = field(default_factory=list)  # pets listed before any write
    probes: dict[str, dict[str, Any]] = field(default_factory=dict)  # str(id) -> {status, body} read before writes
    whole_before: bool = False  # the store was seen whole before any write
    # A probe that answered 200 although the store, seen whole, did not list it: the store looked at
    # again at once.  Another client may have been handed that id in between (a busy service).
    listed_after_probes: list[str] = field(default_factory=list)  # such ids the second look listed
    whole_after_probes: bool = False  # the second look saw the store whole
    repeated: list[str] = field(default_factory=list)  # ids handed out twice in set-up: their last status unknown
    problem: str = ""  # why set-up could not create what it needed (the blocking clause's words)

    def to_dict(self) -> dict[str, Any]:
        return self.__dict__.copy()


def _page(answer: Answer, status: str | None, limit: int | None) -> store.Page | None:
    try:
        return store.Page(status, limit, tuple(expect.pet_list(answer)))
    except Mismatch:
        return None


def _observe(api: Api) -> tuple[list[store.Page | None], bool]:
    queries = [(status, 100) for status in store.FILTERS]
    answers = api.map(lambda q: api.get("/pets", params=_params(*q)), queries)
    pages = [_page(answer, *q) for answer, q in zip(answers, queries, strict=True)]
    whole = all(pages) and store.whole_store(pages[0], [p for p in pages[1:] if p])  # type: ignore[arg-type]
    return pages, bool(whole)


def _listed(pages: list[store.Page | None]) -> list[dict[str, Any]]:
    """Every animal the answered pages of one look at the store show."""
    return [pet for page in pages if page for pet in page.pets]


def _params(status: str | None, limit: int | None) -> dict[str, Any]:
    return {k: v for k, v in (("status", status), ("limit", limit)) if v is not None}


def _probe_ids(before: list[dict[str, Any]]) -> list[int]:
    """Ids nobody has been handed out yet as far as the suite can tell: next ones, small, huge."""
    ids = [p["id"] for p in before if isinstance(p.get("id"), int)]
    top = max(ids, default=0)
    candidates = [top + 1, top + 2, 0, -1, INT64_MAX - 7]
    return [i for i in dict.fromkeys(candidates) if i not in ids and -(2**63) <= i <= INT64_MAX]


def seed(run: Run, api: Api) -> Seeded:
    seeded = Seeded()
    pages, seeded.whole_before = _observe(api)
    seeded.before = _listed(pages)
    probe_ids = _probe_ids(seeded.before)
    reads = api.map(lambda pet_id: api.get(f"/pets/{pet_id}"), probe_ids)
    seeded.probes = {
        str(pet_id): {"status": answer.status, "body": answer.text, "exchange": answer.exchange.to_dict()}
        for pet_id, answer in zip(probe_ids, reads, strict=True)
    }
    answered = [str(pet_id) for pet_id, answer in zip(probe_ids, reads, strict=True) if answer.status == 200]
    if answered and seeded.whole_before:
        again, seeded.whole_after_probes = _observe(api)
        listed = {str(pet.get("id")) for pet in _listed(again)}
        seeded.listed_after_probes = [pet_id for pet_id in answered if pet_id in listed]
    if run.read_only:
        return seeded
    first = pages[0]
    own_count = OWN_PER_STATUS * len(store.STATUSES)
    fillers = store.fillers_needed(first, own_count) if first and seeded.whole_before else 0
    bodies = [run.new_pet(f"fill-{n}", store.STATUSES[n % 3], categoryId=n + 1) for n in range(fillers)]
    bodies += [run.new_pet(f"own-{n}", store.STATUSES[n % 3], categoryId=100 + n) for n in range(own_count)]
    created = api.map(lambda body: api.post("/pets", json_body=body), bodies[:fillers])
    # The suite's own animals come last, when the store holds the most it will during set-up.
    created += api.map(lambda body: api.post("/pets", json_body=body), bodies[fillers:])
    for body, answer in zip(bodies, created, strict=True):
        pet = created_pet(answer)
        if pet is None:
            seeded.problem = f"POST /pets answered {answer.status}: the suite could not create its animals"
            continue
        if str(pet["id"]) in seeded.sent:
            seeded.repeated.append(str(pet["id"]))  # answered side by side: which body it holds now is unknown
        seeded.sent[str(pet["id"])] = {**body, "status": pet.get("status")}  # what the service stored
        if body["name"].startswith(run.name("own-")):
            seeded.own.append(pet)
    seeded.fillers = fillers
    return seeded


def created_pet(answer: Answer) -> dict[str, Any] | None:
    if answer.status != 201:
        return None
    try:
        body = expect.parse_json(answer)
    except Mismatch:
        return None
    return body if isinstance(body, dict) and isinstance(body.get("id"), int) else None


@dataclass
class Grid:
    answers: dict[tuple[str | None, int | None], Answer]
    pages: dict[tuple[str | None, int | None], store.Page]
    known: store.Knowledge
    cap_seen: int


def _grid(run: Run, api: Api, seeded: Seeded) -> Grid:
    def ask() -> dict[str, Answer]:
        # Unfiltered pages first, then the status pages: an animal an unfiltered page shows exists
        # before any status page is asked for.
        unfiltered = [q for q in GRID if q[0] is None]
        filtered = [q for q in GRID if q[0] is not None]
        found = dict(zip(unfiltered, api.map(lambda q: api.get("/pets", params=_params(*q)), unfiltered), strict=True))
        found |= dict(zip(filtered, api.map(lambda q: api.get("/pets", params=_params(*q)), filtered), strict=True))
        return {_grid_key(q): answer for q, answer in found.items()}

    shared = run.once_answers("grid", ask)
    answers = {q: shared[_grid_key(q)] for q in GRID}
    pages = {}
    for query, answer in answers.items():
        try:
            pages[query] = store.Page(query[0], query[1], tuple(expect.pet_list(answer)))
        except Mismatch:
            continue
    known = store.Knowledge()
    for pet in seeded.before:
        known.add(pet)
    for pet_id, body in seeded.sent.items():
        # An id handed out twice exists, with the status of whichever request the service took last.
        status = None if pet_id in seeded.repeated else body.get("status")
        known.add({"id": int(pet_id), "status": status})
    return Grid(answers, pages, known, store.largest_page(list(pages.values())))


def need_own(seeded: Seeded, clauses: str | tuple[str, ...], read_only: bool) -> list[dict[str, Any]]:
    if seeded.own:
        return seeded.own
    if read_only:
        raise undecided(clauses, EMPTY_STORE, "read-only run: the suite has no animals of its own to judge this by")
    raise undecided(clauses, PRECONDITION, seeded.problem or "set-up created no animals", blocked_by="create.created")


def _reads(run: Run, api: Api, seeded: Seeded) -> list[tuple[dict[str, Any], Answer]]:
    """Each of the suite's own animals read back, side by side (or, read-only, a few listed ones)."""
    pets = seeded.own if seeded.own else ([] if not run.read_only else seeded.before[:6])
    table = {str(pet["id"]): Request("GET", f"/pets/{pet['id']}") for pet in pets}
    answers = run.once_answers("reads", lambda: send_table(api, table))
    return [(pet, answers[str(pet["id"])]) for pet in pets]


def _grid_key(query: tuple[str | None, int | None]) -> str:
    return f"{query[0]}|{query[1]}"


@dataclass
class Prepared:
    """Set-up's outcome: the suite's own data, the list grid and the own animals read back."""

    seeded: Seeded
    grid: Grid
    reads: list[tuple[dict[str, Any], Answer]]


def prepare(run: Run) -> Prepared:
    """Set-up, in order: own data, the list grid, the own animals read back.

    The grid and the reads see the store as set-up left it, whatever the tests write later.  Each
    step runs once per run: other processes of the run (xdist workers, the child processes of a
    concurrent run) wait for its result, so none of them writes before set-up is done.
    """
    seeded = Seeded(**run.once("seeded", lambda: seed(run, run.api).to_dict()))
    return Prepared(seeded, _grid(run, run.api, seeded), _reads(run, run.api, seeded))


def pytest_collectstart(collector: pytest.Collector) -> None:
    """In a run of the whole suite, set-up starts when collection reaches its first module, so
    that its round trips overlap the collection of the generated tests (``prepared`` waits for
    it).  A run that selects tests (-k, -m, --deselect) or only collects keeps set-up for its
    first test: it may select none."""
    run = active_run()
    if run is not None and isinstance(collector, pytest.Module) and whole_suite_selected(collector.config):
        start_set_up(run)


# Tables of requests that a module's fixture answers from, by fixture name (see ``ahead``).
AHEAD: dict[str, Callable[[Run, Seeded], Any]] = {}


def ahead(fixture: str) -> Callable[[Callable[[Run, Seeded], Any]], Any]:
    """Makes a table of requests the module-scoped fixture ``fixture``: the table is sent in the
    background right after set-up when a selected test needs it, so that its round trips overlap
    the tests before that one; the fixture answers with what it got (or sends it then)."""

    def register(send: Callable[[Run, Seeded], Any]) -> Any:
        AHEAD[fixture] = send

        @pytest.fixture(scope="module", name=fixture)
        def answers(run: Run, seeded: Seeded) -> Any:
            return run.result_of(fixture, lambda: send(run, seeded))

        return answers

    return register


def pytest_collection_finish(session: pytest.Session) -> None:
    """Once the selection is known: set-up (if it has not started), then each table a selected
    test needs, in the order of the tests, one after another in the background."""
    run = active_run()
    runnable = [item for item in session.items if will_run(item)]
    if run is None or session.config.option.collectonly or not runnable:
        return
    start_set_up(run)
    needed = dict.fromkeys(n for i in runnable for n in getattr(i, "fixturenames", ()) if n in AHEAD)
    for fixture in needed:
        run.start(fixture, lambda f=fixture: AHEAD[f](run, prepared_of(run).seeded))


def prepared_of(run: Run) -> Prepared:
    """Set-up's outcome: as started in the background, or done now."""
    return run.result_of("prepare", lambda: prepare(run))


@pytest.fixture(scope="session")
def prepared(run: Run) -> Prepared:
    return prepared_of(run)


@pytest.fixture(scope="session")
def seeded(prepared: Prepared) -> Seeded:
    return prepared.seeded


@pytest.fixture(scope="session")
def grid(prepared: Prepared) -> Grid:
    return prepared.grid


@pytest.fixture(scope="session")
def reads(prepared: Prepared) -> list[tuple[dict[str, Any], Answer]]:
    return prepared.reads


def start_set_up(run: Run) -> None:
    """Set-up in the background; generated cases, drawn meanwhile, go out once it is done."""
    run.start("prepare", lambda: prepare(run))
    run.hold_cases_until("prepare")


@pytest.fixture(autouse=True)
def set_up(request: pytest.FixtureRequest) -> None:
    """Set-up before any test (see ``prepare``).  A generated test starts drawing at once: its
    cases wait for set-up before they are sent (``Run.hold_cases_until``)."""
    run: Run = request.getfixturevalue("run")
    drawing_first = request.node.get_closest_marker("deferred") is not None and run.cases_held
    if not drawing_first:
        request.getfixturevalue("prepared")
