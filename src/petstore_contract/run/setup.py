"""Set-up: the suite's own data on the target, and what it learns of the store before it judges it.

In a read-write run the suite creates the animals it needs, once per run (also under xdist), in the
order of its plan of writes (``writeplan``).  On a store seen whole: every refused create first and one
unfiltered page right after them (``looks``); then two of its own per status and every valid body of the
create and read tables, while the store is small enough to show each on a page of 100 in any list order;
a look at the store; fillers up to 101 animals when it shows fewer.  On a store it cannot see whole (a
crowded Staging: no delete) one of its own per status and the tables' bodies merged into a few.  A run
of some tests (-k, -m) makes only the parts they judge (``selection.needed_writes``).  Set-up takes what
the answers show: a create answered with the animal (``expect.created_animal``: a 201, or another 2xx
with a Pet) made it, whatever create.created finds of its status.  Read-only runs judge the store as is.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from petstore_contract.core.records import EMPTY_STORE, PRECONDITION, Mismatch, undecided
from petstore_contract.interface.clauses import CLAUSE_IDS, ClauseId
from petstore_contract.interface.document import INT64_MAX, INT64_MIN, STATUSES
from petstore_contract.interface.jsontypes import JsonObject
from petstore_contract.judging import expect, store
from petstore_contract.run import Run, looks, lookup, writeplan
from petstore_contract.run.api import Api, Request, Row, Unanswered, send_row, send_table
from petstore_contract.run.looks import created_pet, grid_key, list_request, refused_requests
from petstore_contract.run.selection import FILLERS, OWN, PLAN
from petstore_contract.run.setup_records import Draft, Planned, Probe, answer_table
from petstore_contract.run.setup_records import Seeded as Seeded  # the tests' fixtures name it here
from petstore_contract.transport import Answer

OWN_PER_STATUS = 2  # on a store seen whole: list.status.found looks for each
OWN_PER_STATUS_CROWDED = 1  # on a store too large to see whole, no page need show them
# Generated creates a process sends on a crowded store (each further one only grows a store that never shrinks).
GENERATED_CREATES_WHEN_CROWDED = 2
# The list grid: status (none or each PetStatus) x limit (none, 1, 2, 5, 20, 100).
GRID = [(status, limit) for status in store.FILTERS for limit in store.LIMITS]
# Animals the grid listed, read alone right after it (list.item.same): the first, middle and last item
# of each page, at most this many ids (a few percent of a run's requests).
SAMPLED = 24
SAMPLE = "sample|"  # the key of a sampled read among the grid's answers
SET_UP = "set-up"  # its work's key in the run's background (``Run.start``)
OWN_READ = "own|"  # the key of an animal read back (``_read_back``) among them


def _page(answer: Row, status: str | None, limit: int | None, admitted: tuple[int, ...] = ()) -> store.Page | None:
    """The page a row answered, or None: unanswered, or not a list of Pet (list.shape judges that)."""
    if isinstance(answer, Unanswered):
        return None
    try:
        return store.Page(status, limit, tuple(expect.pet_list(answer, admitted)))
    except Mismatch:
        return None


def _observe(api: Api) -> tuple[list[store.Page | None], bool]:
    queries = [(status, 100) for status in store.FILTERS]
    answers = api.map(lambda q: send_row(api, list_request(*q)), queries)
    pages = [_page(answer, *q) for answer, q in zip(answers, queries, strict=True)]
    whole = all(pages) and store.whole_store(pages[0], [p for p in pages[1:] if p])  # type: ignore[arg-type]
    return pages, bool(whole)


def _listed(pages: list[store.Page | None]) -> list[JsonObject]:
    """Every animal the answered pages of one look at the store show."""
    return [pet for page in pages if page for pet in page.pets]


def _probe_ids(before: list[JsonObject]) -> list[int]:
    """Ids nobody has been handed out yet as far as the suite can tell: next ones, small, huge."""
    ids = [pet_id for p in before if isinstance(pet_id := p.get("id"), int)]
    top = max(ids, default=0)
    # The next ids, then the edges of int64 a service may store in a narrower type (§4.3: petId is int64).
    candidates = [top + 1, top + 2, 0, -1, INT64_MAX - 7, 2**31 - 1, 2**31, 2**53 + 1, INT64_MIN, INT64_MAX]
    return [i for i in dict.fromkeys(candidates) if i not in ids and INT64_MIN <= i <= INT64_MAX]


def _probe(answer: Row) -> Probe:
    """One probe; an unanswered one has no status and says why."""
    if isinstance(answer, Unanswered):
        return Probe(None, str(answer.problem))
    return Probe(answer.status, answer.text, answer.exchange)


def _probes_after(api: Api, seeded: Draft, handed: int) -> dict[str, Probe]:
    """The two ids after one the service just handed out, read (each not listed or probed already)."""
    listed = {pet.get("id") for pet in seeded.before}
    after = [i for i in (handed + 1, handed + 2) if INT64_MIN <= i <= INT64_MAX and i not in listed]
    after = [i for i in after if str(i) not in seeded.probes]
    reads = api.map(lambda pet_id: send_row(api, Request("GET", f"/pets/{pet_id}")), after)
    return {str(pet_id): _probe(answer) for pet_id, answer in zip(after, reads, strict=True)}


def own_data(run: Run, api: Api) -> Seeded:
    """Set-up's first step: the suite's own data on the target, and what it learns of the store."""
    seeded = Draft()
    first_page = _look_and_probe(api, seeded)
    if not run.read_only:
        _write(run, api, seeded, first_page)
    return seeded.seal()


def _look_and_probe(api: Api, seeded: Draft) -> store.Page | None:
    """The store before any write, and ids nobody was handed out read; the unfiltered page of 100, if any."""
    pages, seeded.whole_before = _observe(api)
    seeded.before = _listed(pages)
    probe_ids = _probe_ids(seeded.before)
    reads = api.map(lambda pet_id: send_row(api, Request("GET", f"/pets/{pet_id}")), probe_ids)
    seeded.probes = {str(pet_id): _probe(answer) for pet_id, answer in zip(probe_ids, reads, strict=True)}
    answered = [pet_id for pet_id, probe in seeded.probes.items() if probe.status == 200]
    if answered and seeded.whole_before:
        again, seeded.whole_after_probes = _observe(api)
        listed = {str(pet.get("id")) for pet in _listed(again)}
        seeded.listed_after_probes = [pet_id for pet_id in answered if pet_id in listed]
    return pages[0]


def _write(run: Run, api: Api, seeded: Draft, first_page: store.Page | None) -> None:
    """The plan of writes, in its order, with the looks between them."""
    # Only the parts the selected tests judge (``selection.needed_writes``; every part in a whole run).
    parts = run.set_up_writes
    per_status = OWN_PER_STATUS if seeded.whole_before else OWN_PER_STATUS_CROWDED
    own = writeplan.own_bodies(run, per_status * 3) if OWN in parts else []
    plan = writeplan.plan_bodies(run, seeded.crowded) if PLAN in parts else {}
    # The plan of writes: own animals and every body carrying a variation first, while the store is small
    # enough to show each on a page of 100 in any order; a look; the fillers last.  On a store too large to
    # see whole the first own animal goes alone, the ids right after its own read before any other create
    # (an id that answered 200, then handed to it, proves an animal invented on read: read.not-found).  On
    # a store seen whole its first own animal of each status goes first, then each status page (``looks``).
    keys = list(plan)
    bodies = own + [plan[key] for key in keys]
    # Every kind of refused create (required fields, types, status, JSON, credentials, media type, size), on a
    # store seen whole, before any other write, then one unfiltered page (``looks``): on a store seen empty
    # an empty page proves the refusals added nothing, whatever the page cap and the order.
    if PLAN in parts and seeded.whole_before:
        _refuse(run, api, seeded, None, refused=True)
        seeded.after_refusals = answer_table({looks.AFTER_REFUSALS: send_row(api, list_request(None, 100))})
    created: list[Row] = []
    if seeded.crowded and bodies:
        created = _create(api, bodies[:1])
        if (marker := created_pet(created[0])) is not None and isinstance(handed := marker.get("id"), int):
            seeded.probes |= _probes_after(api, seeded, handed)
    elif len(own) >= len(STATUSES):  # the first own animal of each status alone, then each status page
        created = _create(api, bodies[: len(STATUSES)])
        firsts = [pet for answer in created if (pet := created_pet(answer))]
        seeded.own_look = looks.own_look(api, [*seeded.before, *seeded.beside_plan, *firsts])
    created += _create(api, bodies[len(created) :])
    _keep_own(seeded, own, created, lookup.look_up(api, bodies, created))
    for key, answer in zip(keys, created[len(own) :], strict=True):
        _keep(seeded, plan[key], answer)
        seeded.plan[key] = _planned(plan[key], answer)
    # A create carrying the id of the suite's first animal (create.id.assigned): that animal is read back
    # after the grid (``_own_reads``), so a create that replaced it shows.  On a store too large to see
    # whole the refused creates go beside it, before the early look; on a store seen whole they went first.
    if PLAN in parts:
        held = writeplan.held_id_body(run, seeded.own[0]) if seeded.own else None
        _refuse(run, api, seeded, held, refused=seeded.crowded)
    if seeded.whole_before and parts & {PLAN, FILLERS}:
        seeded.early = answer_table(looks.early_look(api))
    if seeded.whole_before and FILLERS in parts:
        # Distinct ids: a create that answered an id already known (a client's id taken, replacing that
        # animal) added none, so the store still needs its fillers to reach 101 animals.
        made = set(seeded.sent) | {str(pet["id"]) for pet in seeded.beside_plan}
        fillers = store.fillers_needed(first_page, len(made)) if first_page else 0
        _fill(run, api, seeded, fillers)


def _keep_own(seeded: Draft, own: list[JsonObject], created: list[Row], found: dict[int, JsonObject]) -> None:
    """Set-up's own animals as the service made them (or a page listed them); the first of each status's
    answer; the problem that blocks what needed them when one was not made."""
    for index, (body, answer) in enumerate(zip(own, created, strict=False)):
        pet = _keep(seeded, body, answer, found.get(index))
        if pet is None:
            # A refused plain NewPet is itself a create.created violation, reported with its exchange by
            # the pipeline of every exchange (pipeline.py); here it only blocks what needed the animal.
            said = (
                f"answered {answer.status} to a plain valid NewPet (a violation reported with its exchange)"
                if isinstance(answer, Answer)
                else f"was not answered ({answer.problem})"
            )
            seeded.problem = f"POST /pets {said}: the suite could not create its animals"
            continue
        seeded.own.append(pet)
        status = body.get("status")
        if isinstance(answer, Answer) and isinstance(status, str) and status not in seeded.own_answers:
            seeded.own_answers[status] = _planned(body, answer)


def _planned(body: JsonObject, answer: Row) -> Planned:
    """A create of the plan with what POST /pets answered, as the data the run's processes share."""
    return Planned(body, answer_table({"a": answer})["a"])


def _fill(run: Run, api: Api, seeded: Draft, count: int) -> None:
    """``count`` fillers over the statuses; those a service refused (a 4xx to a valid NewPet: create.created's
    finding) sent again once in the statuses it took, so that the store still holds 101 animals."""
    statuses: tuple[str, ...] = STATUSES
    sent = 0
    for _ in range(2):
        status_of = [statuses[n % len(statuses)] for n in range(sent, sent + count)]
        bodies = [run.new_pet(f"fill-{n}", status_of[n - sent], categoryId=n + 1) for n in range(sent, sent + count)]
        sent += count
        # The last filler alone: the animal set-up created last, read back by its id (reads that lag
        # behind writes show there).
        made = _create(api, bodies[:-1])
        made += _create(api, bodies[-1:])
        found = lookup.look_up(api, bodies, made)
        taken: set[str] = set()
        refused = 0
        for index, (body, answer) in enumerate(zip(bodies, made, strict=True)):
            pet = _keep(seeded, body, answer, found.get(index))
            if pet is not None:
                seeded.newest = pet
                seeded.filler_ids.append(str(pet["id"]))
                taken.add(status_of[index])
            elif isinstance(answer, Answer) and 400 <= answer.status < 500:
                refused += 1
        statuses, count = tuple(s for s in STATUSES if s in taken), refused
        if not count or not statuses:
            break
    seeded.fillers = sent


def _keep(seeded: Draft, body: JsonObject, answer: Row, found: JsonObject | None = None) -> JsonObject | None:
    """Records one create of set-up: the Pet it answered, or the animal a page lists for a create whose answer
    was lost (``found``: ``lookup``), or None."""
    pet = created_pet(answer) or found
    if pet is None:
        return None
    if str(pet["id"]) in seeded.sent:
        seeded.repeated.append(str(pet["id"]))  # answered side by side: which body it holds now is unknown
    seeded.sent[str(pet["id"])] = {**body, "status": pet.get("status")}  # what the service stored
    seeded.created[str(pet["id"])] = pet
    return pet


def _refuse(run: Run, api: Api, seeded: Draft, held: JsonObject | None, *, refused: bool) -> None:
    """The refused creates (``refused``: ``writeplan.rejected_bodies``) and the create carrying a held id."""
    table: dict[str, Request] = {}
    if refused:
        seeded.rejected = writeplan.rejected_bodies(run, seeded.crowded)
        table = refused_requests(seeded.rejected)
    if held is not None:
        table["client-held-id"] = Request("POST", "/pets", json_body=held)
    answers = send_table(api, table)
    seeded.beside_plan += [
        {"id": pet["id"], "status": pet.get("status")} for answer in answers.values() if (pet := created_pet(answer))
    ]
    if held is not None:
        seeded.plan["client-held-id"] = _planned(held, answers.pop("client-held-id"))
    if not refused:
        return
    seeded.rejected_answers = answer_table(answers)
    seeded.admitted = [
        pet_id
        for key, answer in answers.items()
        if key.startswith(("reject-", "raw-"))
        and (pet := created_pet(answer)) is not None
        and isinstance(pet_id := pet.get("id"), int)
    ]


def _create(api: Api, bodies: list[JsonObject]) -> list[Row]:
    return api.map(lambda body: send_row(api, Request("POST", "/pets", json_body=body)), bodies)


@dataclass(frozen=True)
class Grid:
    """The list grid (``GRID``), asked once per run right after set-up's writes, and what it shows."""

    answers: dict[tuple[str | None, int | None], Row]
    pages: dict[tuple[str | None, int | None], store.Page]
    known: store.Knowledge
    cap_seen: int
    samples: dict[int, Row] = field(default_factory=dict)  # id -> GET /pets/{id}, for ids the grid listed
    own_reads: dict[str, Row] = field(default_factory=dict)  # str(id) -> GET /pets/{id} of ``_read_back``
    admitted: tuple[int, ...] = ()  # ``Seeded.admitted``: shown on pages, not judged for their shape
    arrays: dict[tuple[str | None, int | None], store.Page] = field(default_factory=dict)  # ``looks.listed``


def _sample_ids(answers: dict[str, Row]) -> list[int]:
    """Ids spread over every page the grid got (first, middle, last item), each once, at most ``SAMPLED``."""
    chosen: dict[int, None] = {}
    for answer in answers.values():
        if isinstance(answer, Unanswered) or answer.status != 200:
            continue
        try:
            items = expect.parse_json(answer)
        except Mismatch:
            continue
        if not isinstance(items, list) or not items:
            continue
        for item in (items[0], items[len(items) // 2], items[-1]):
            pet_id = item.get("id") if isinstance(item, dict) else None
            if isinstance(pet_id, int) and type(pet_id) is int and INT64_MIN <= pet_id <= INT64_MAX:
                chosen.setdefault(pet_id)
    return list(chosen)[:SAMPLED]


def _grid(run: Run, api: Api, seeded: Seeded) -> Grid:
    def ask() -> dict[str, Row]:
        # Unfiltered pages first: an animal an unfiltered page shows exists before any status page is asked.
        unfiltered = {grid_key(q): list_request(*q) for q in GRID if q[0] is None}
        filtered = {grid_key(q): list_request(*q) for q in GRID if q[0] is not None}
        pages = send_table(api, unfiltered) | send_table(api, filtered)
        # Read alone in the same process as the grid, so that its pipeline (pipeline.py) compares them too;
        # the suite's own animals are read back beside them (``_reads``): one round trip for both.
        reads = {f"{SAMPLE}{pet_id}": Request("GET", f"/pets/{pet_id}") for pet_id in _sample_ids(pages)}
        return pages | send_table(api, reads | _own_reads(run, seeded))

    shared = run.once_answers("grid", ask)
    answers = {q: shared[grid_key(q)] for q in GRID}
    pages = {q: page for q, answer in answers.items() if (page := _page(answer, *q, seeded.admitted)) is not None}
    known = store.Knowledge.of([*seeded.before, *seeded.beside_plan])
    for pet_id, body in seeded.sent.items():
        # An id handed out twice exists, with the status of whichever request the service took last.
        status = None if pet_id in seeded.repeated else body.get("status")
        known.add({"id": int(pet_id), "status": status})
    samples = {int(key.removeprefix(SAMPLE)): row for key, row in shared.items() if key.startswith(SAMPLE)}
    own = {key.removeprefix(OWN_READ): row for key, row in shared.items() if key.startswith(OWN_READ)}
    arrays = {q: page for q, answer in answers.items() if (page := looks.listed(answer, *q)) is not None}
    largest = store.largest_page([*arrays.values()])  # C >= any array's length, whatever its items
    return Grid(answers, pages, known, largest, samples, own, tuple(seeded.admitted), arrays)


def need_own(seeded: Seeded, clauses: ClauseId | tuple[ClauseId, ...], read_only: bool) -> tuple[JsonObject, ...]:
    if seeded.own:
        return seeded.own
    if read_only:
        raise undecided(clauses, EMPTY_STORE, "read-only run: the suite has no animals of its own to judge this by")
    raise undecided(
        clauses, PRECONDITION, seeded.problem or "set-up created no animals", blocked_by=CLAUSE_IDS.create_created
    )


def _read_back(run: Run, seeded: Seeded) -> list[JsonObject]:
    """The animals read back after the grid: the suite's own (or, read-only, a few listed ones), and the
    animal created last (a filler), read right after set-up's writes."""
    pets = list(seeded.own) if seeded.own else ([] if not run.read_only else list(seeded.before[:6]))
    if seeded.own and seeded.newest is not None:
        pets = [*pets, seeded.newest]
    return pets


def _own_reads(run: Run, seeded: Seeded) -> dict[str, Request]:
    return {f"{OWN_READ}{pet['id']}": Request("GET", f"/pets/{pet['id']}") for pet in _read_back(run, seeded)}


def _reads(run: Run, grid: Grid, seeded: Seeded) -> list[tuple[JsonObject, Row]]:
    """Each animal of ``_read_back`` with its answer (sent with the grid's sampled reads, side by side)."""
    return [(pet, grid.own_reads[str(pet["id"])]) for pet in _read_back(run, seeded)]


@dataclass(frozen=True)
class SetUp:
    """Set-up's outcome: the suite's own data, the list grid and the own animals read back."""

    seeded: Seeded
    grid: Grid
    reads: list[tuple[JsonObject, Row]]


def set_up(run: Run) -> SetUp:
    """Set-up, in order: own data, the list grid, the own animals read back.

    The grid and the reads see the store as set-up left it, whatever the tests write later.  Each
    step runs once per run: other processes of the run (xdist workers) wait for its result, so
    none of them writes before set-up is done.
    """
    # Through its data in every process, the one that set up included: each judges the same record.
    seeded = Seeded.from_dict(run.once("seeded", lambda: own_data(run, run.api).to_dict()))
    if seeded.crowded and not run.read_only:
        run.cases.limit_creates(GENERATED_CREATES_WHEN_CROWDED)
    grid = _grid(run, run.api, seeded)
    return SetUp(seeded, grid, _reads(run, grid, seeded))


def set_up_of(run: Run) -> SetUp:
    """Set-up's outcome: as started in the background, or done now."""
    return run.result_of(SET_UP, lambda: set_up(run))


def start_set_up(run: Run) -> None:
    """Set-up in the background; generated cases, drawn meanwhile, go out once it is done."""
    run.start(SET_UP, lambda: set_up(run))
    run.cases.hold_cases_until(SET_UP)
