"""§4.2 Add an animal: POST /pets with a NewPet (§2), answered 201 with a Pet or 400 with an Error.

Every name the suite sends is new (run id and a counter), so a server that rejects duplicate
names is not a false alarm.  Bodies whose acceptance the document leaves open (name rules,
category values) must be echoed exactly when accepted, or rejected with a 400 Error.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from petstore_contract.core.records import PRECONDITION, Mismatch, undecided
from petstore_contract.interface.clauses import CLAUSE_IDS
from petstore_contract.interface.document import INT64_MAX, INT64_MIN
from petstore_contract.interface.silence import classify
from petstore_contract.interface.spec import schema_errors
from petstore_contract.judging import expect, store
from petstore_contract.judging.expect import Judge
from petstore_contract.run import Run, ahead, writeplan
from petstore_contract.run.ahead import sent_ahead
from petstore_contract.run.api import Request, Row, answered, answers_from_data, send_table
from petstore_contract.run.selection import OWN, PLAN
from petstore_contract.run.setup import Seeded, created_pet
from petstore_contract.transport import Answer

# The parts of set-up's plan of writes these tests judge (``selection.needed_writes``): the create tables are set-
# up's plan of writes and its own animals' answers.
SET_UP_WRITES = (OWN, PLAN)

pytestmark = pytest.mark.writes

Sent = tuple[dict[str, Row], dict[str, Any]]
PLAIN, OPEN, OPEN_GROUP, CLIENT_ID = writeplan.PLAIN, writeplan.OPEN, writeplan.OPEN_GROUP, writeplan.CLIENT_ID


# Bodies §4.2/§7 say to reject with 400 and an Error body, by the clause they break, and those that are no
# JSON object: set-up sends them early, before its look at the store (``writeplan.REJECTED``).
REJECTED, REJECTED_RAW = writeplan.REJECTED, writeplan.REJECTED_RAW


def planned(seeded: Seeded, prefix: str = "") -> tuple[dict[str, Row], dict[str, Any]]:
    """What set-up's plan of writes sent (keys starting with ``prefix``) and POST /pets answered."""
    keys = [key for key in seeded.plan if key.startswith(prefix)]
    answers = answers_from_data({key: seeded.plan[key].answer for key in keys})
    return answers, {key: seeded.plan[key].sent for key in keys}


@sent_ahead("sent")
def _sent(run: Run, seeded: Seeded) -> tuple[dict[str, Row], dict[str, Any]]:
    """The create table (set-up's planned creates and its refused ones), then each animal it added read
    back by its id (``read-<key>``; the twins are the read tests')."""
    created, sent = planned(seeded)
    created = {key: row for key, row in created.items() if not key.startswith("twin-")}
    sent = {key: body for key, body in sent.items() if key in created}
    rejected = answers_from_data(seeded.rejected_answers)

    def send() -> dict[str, Row]:
        pets = {key: created_pet(answer) for key, answer in created.items()}
        reads = {f"read-{key}": Request("GET", f"/pets/{pet['id']}") for key, pet in pets.items() if pet is not None}
        return send_table(run.api, reads)

    return created | rejected | run.once_answers("create", send), sent | seeded.rejected


@pytest.fixture(scope="module")
def sent(run: Run, seeded: Seeded) -> tuple[dict[str, Row], dict[str, Any]]:
    return ahead.answers(run, "sent", seeded)


def _judge_created(judge: Judge, answer: Answer, sent: dict[str, Any]) -> dict[str, Any] | None:
    with judge(CLAUSE_IDS.create_created):
        expect.status(answer, 201)
    if not expect.created(answer):
        return None
    # A 201, or another 2xx whose body is a Pet with its id (the status is create.created's violation,
    # found above): the animal exists, and the rest of the answer is judged as a 201's would be.
    with judge(CLAUSE_IDS.json_content_type):
        expect.json_media_type(answer)
    created = None
    with judge(CLAUSE_IDS.create_created):
        created = expect.pet(expect.parse_json(answer), "the created animal", answer.exchange)
    if created is not None:
        with judge(CLAUSE_IDS.create_echo):
            expect.same_fields(sent, created, "the created animal", answer.exchange)
    return created


@pytest.mark.clause(CLAUSE_IDS.create_created, CLAUSE_IDS.create_echo, CLAUSE_IDS.deprecation_scope)
@pytest.mark.parametrize("name", PLAIN)
def test_plain_new_pet_is_created_and_echoed(sent: Sent, judge: Judge, seeded: Seeded, name: str) -> None:
    answer, body = _plain(sent, seeded, name)
    _judge_created(judge, answer, body)
    with judge(CLAUSE_IDS.deprecation_scope):  # §9.3 marks only GET /pets/{petId} deprecated
        expect.not_deprecated(answer)


def _plain(sent: Sent, seeded: Seeded, status: str) -> tuple[Row, dict[str, Any]]:
    """The plain create of ``status``: the create table's, or (crowded store) set-up's own animal."""
    answers, bodies = sent
    if f"plain-{status}" in answers:
        return answers[f"plain-{status}"], bodies[f"plain-{status}"]
    own = seeded.own_answers.get(status)
    if own is None:
        reason = seeded.problem or f"set-up created no {status} animal"
        raise undecided(
            (CLAUSE_IDS.create_created, CLAUSE_IDS.create_echo),
            PRECONDITION,
            reason,
            blocked_by=CLAUSE_IDS.create_created,
        )
    return answers_from_data({"own": own.answer})["own"], own.sent


@pytest.mark.clause(CLAUSE_IDS.create_echo)
@pytest.mark.parametrize("name", OPEN)
def test_open_body_is_echoed_or_rejected(sent: Sent, judge: Judge, name: str) -> None:
    answers, bodies = sent
    if name in writeplan.NOT_WHEN_CROWDED and f"open-{name}" not in answers:
        # Not sent, so not judged (the clause stands on the other cases): a plain skip, not a note.
        pytest.skip("not sent to a crowded store: the suite leaves no megabyte animal in a shared store's pages")
    key = f"open-{name}" if f"open-{name}" in answers else f"open-{OPEN_GROUP[name]}"
    answer, body = answers[key], bodies[key]
    # A body larger than a service (or a proxy before it) accepts is outside the document: HTTP fits a
    # 413 to it (interface/silence.py), a refusal like the 400 a name rule gives.
    placed = classify(
        "POST", answer.exchange.url, dict(answer.exchange.request_headers), json.dumps(body, ensure_ascii=False)
    )
    if answer.status == 400 or (answer.status >= 400 and placed.fits(answer.status)):
        with judge(CLAUSE_IDS.errors_body):
            expect.error_body(answer)
        return
    if answer.status != 201:
        # A valid body (its values within what §2 allows): 201 or a 400 Error (§4.2), or what HTTP fits.
        with judge(CLAUSE_IDS.responses_documented):
            expect.status(answer, 201, 400, *(placed.silence.statuses if placed.silence else ()))
    if expect.made_nothing(judge, answer, CLAUSE_IDS.create_echo):
        return
    with judge(CLAUSE_IDS.create_echo):
        expect.same_fields(body, expect.parse_json(answer), "the created animal", answer.exchange)


@pytest.mark.clause(CLAUSE_IDS.create_id)
def test_ids_are_int64_and_never_repeat(sent: Sent, judge: Judge, seeded: Any) -> None:
    """§2 "Unique identifier, assigned by the service on creation": a new animal's id was never handed
    out before in the run, and is no id of an animal the store listed before the run's first write
    (ids that wrap around on a crowded store); set-up's own creations are held to the same.  The
    animals judged are those the create table added (created side by side)."""
    existing = {pet["id"] for pet in seeded.before if type(pet.get("id")) is int}
    # Every create answered 201, and every other 2xx with a Pet (``expect.created_animal``: an animal made,
    # its status create.created's); the table's reads back are no creates.
    creates = [a for key, a in answered(sent[0]).items() if not key.startswith("read-")]
    created = [a for a in creates if expect.created(a)]
    # The animals judged one by one below were created by set-up's plan too: held against each other.
    judged = {str((created_pet(a) or {}).get("id")) for a in created}
    ids: dict[Any, Answer] = {int(pet_id): None for pet_id in seeded.sent if pet_id not in judged}  # type: ignore[misc]
    if not created:
        raise undecided(
            CLAUSE_IDS.create_id, PRECONDITION, "POST /pets created nothing", blocked_by=CLAUSE_IDS.create_created
        )
    with judge(CLAUSE_IDS.create_id):
        reused = sorted(int(pet_id) for pet_id in seeded.sent if int(pet_id) in existing)
        if reused or seeded.repeated:
            why = f"id {reused[0]} of an animal listed before" if reused else f"id {seeded.repeated[0]} twice"
            raise Mismatch("set-up's new animals each given a new id", f"POST /pets handed out {why}")
    for answer in created:
        with judge(CLAUSE_IDS.create_id):
            pet_id = expect.parse_json(answer).get("id")
            if type(pet_id) is not int or not INT64_MIN <= pet_id <= INT64_MAX:
                raise Mismatch("an int64 id", f"id {expect.short(pet_id)}", answer.exchange)
            if pet_id in ids or pet_id in existing:
                where = "in the run" if pet_id in ids else "to an animal listed before the run's first write"
                raise Mismatch(f"an id never handed out before ({where})", f"id {pet_id} again", answer.exchange)
            ids[pet_id] = answer


@pytest.mark.clause(CLAUSE_IDS.read_found)
def test_created_animal_reads_back_as_it_was_echoed(sent: Sent, judge: Judge) -> None:
    """Each animal the create table added, read back by its id, holds every field its 201 echoed as
    sent (a store that keeps less than it echoes, e.g. names in a Latin-1 column, shows on the read);
    a field the echo already changed is create.echo's to judge."""
    answers, bodies = sent
    for key, body in bodies.items():
        read, pet = answers.get(f"read-{key}"), created_pet(answers[key])
        if read is None or pet is None or schema_errors("Pet", pet):
            continue  # no Pet created (create.created and create.echo judge that)
        expected = {"id": pet["id"]} | {
            name: value for name, value in body.items() if name in pet and _same(pet[name], value)
        }
        with judge(CLAUSE_IDS.read_found):
            expect.status(read, 200)
            got = expect.pet(expect.parse_json(read), "the animal read back", read.exchange)
            expect.same_fields(expected, got, f"GET /pets/{pet['id']}", read.exchange)


def _same(echoed: Any, sent: Any) -> bool:
    return bool(echoed == sent and type(echoed) is type(sent))


@pytest.mark.clause(CLAUSE_IDS.create_id_assigned)
def test_client_supplied_id_is_ignored_or_rejected(sent: Sent, judge: Judge) -> None:
    answer = sent[0]["client-id"]
    if answer.status != 400 and expect.made_nothing(judge, answer, CLAUSE_IDS.create_id_assigned):
        return
    with judge(CLAUSE_IDS.create_id_assigned):
        if answer.status == 400:
            expect.error_body(answer)
            return
        got = expect.parse_json(answer)
        if isinstance(got, dict) and got.get("id") == CLIENT_ID:
            raise Mismatch(
                "an id the service chose (§2), or a 400 Error", f"the client's id {CLIENT_ID}", answer.exchange
            )


@pytest.mark.clause(CLAUSE_IDS.create_id_assigned)
def test_an_id_the_suite_holds_replaces_no_animal(
    sent: Sent, judge: Judge, reads: list[tuple[dict[str, Any], Row]]
) -> None:
    """§2 "Unique identifier, assigned by the service on creation": a create carrying the id of an animal
    the run created is ignored (201 with an id of the service's own: one handed out again is create.id's)
    or refused (400 Error); either way the animal that holds that id reads back as it was created."""
    answer = sent[0].get("client-held-id")
    if answer is None:
        raise undecided(
            CLAUSE_IDS.create_id_assigned, PRECONDITION, "set-up created no animal to hold", CLAUSE_IDS.create_created
        )
    held = sent[1]["client-held-id"]["id"]
    if answer.status == 400:
        with judge(CLAUSE_IDS.create_id_assigned):
            expect.error_body(answer)
    elif not expect.made_nothing(judge, answer, CLAUSE_IDS.create_id_assigned):
        with judge(CLAUSE_IDS.create_id_assigned):
            got = expect.parse_json(answer)
            pet_id = got.get("id") if isinstance(got, dict) else None
            # The client's id kept is this clause's; another id handed out again is create.id's, judged
            # over every create of the run (judging/ids.py): one fault, one clause.
            if pet_id == held:
                raise Mismatch(
                    "a new id the service chose (§2), or a 400 Error",
                    f"id {pet_id}: the held animal's own id",
                    answer.exchange,
                )
    # Only what the held-id create sent, shown under the held id, is this clause's: any other difference
    # (a name changed, a field dropped, another animal read) is read.found's, one fault on one clause.
    name = sent[1]["client-held-id"].get("name")
    for pet, read in reads:
        if pet.get("id") != held or not isinstance(read, Answer) or read.status != 200:
            continue  # read.found judges a read that finds nothing
        with judge(CLAUSE_IDS.create_id_assigned):
            shown = expect.parse_json(read)
            replaced = isinstance(shown, dict) and shown.get("id") == held and shown.get("name") == name
            if replaced and pet.get("name") != name:
                raise Mismatch(
                    f"animal {held} as it was created, after a create that carried its id",
                    f"{expect.short(shown)} read back",
                    read.exchange,
                )


@pytest.mark.clause(CLAUSE_IDS.create_default_status)
def test_a_member_named_otherwise_sets_no_status(sent: Sent, judge: Judge) -> None:
    """JSON member names are exact strings (RFC 8259 §4, §8.3: compared code unit by code unit): a body
    whose status is under "STATUS" omits status, and gets what an omitted status gets (§3: not shown, but
    one default), never the value under the other name.  A service may refuse the unknown member (400)."""
    answer, plain = sent[0].get("status-member-case"), sent[0].get("no-status")
    if answer is None or plain is None:
        pytest.skip("not sent: set-up's plan of writes did not run")
    if answer.status == 400:
        with judge(CLAUSE_IDS.errors_body):
            expect.error_body(answer)
        return
    if not (expect.created(answer) and expect.created(plain)):
        why = f"POST /pets answered {answer.status} and {plain.status}, not both an animal created"
        raise undecided(CLAUSE_IDS.create_default_status, PRECONDITION, why, CLAUSE_IDS.create_created)
    with judge(CLAUSE_IDS.create_default_status):
        got, default = expect.parse_json(answer), expect.parse_json(plain)
        taken = got.get("status") if isinstance(got, dict) else None
        omitted = default.get("status") if isinstance(default, dict) else None
        if taken == "sold" and omitted != "sold":
            raise Mismatch(
                f"the status an omitted status takes ({omitted!r}): STATUS is no member of NewPet",
                f"status {taken!r}, the value sent as STATUS",
                answer.exchange,
            )


@pytest.mark.clause(CLAUSE_IDS.create_default_status)
def test_omitted_status_is_absent_or_a_pet_status(sent: Sent, judge: Judge) -> None:
    answer = sent[0]["no-status"]
    if not expect.created(answer):
        why = f"POST /pets answered {answer.status} with no animal created"
        raise undecided(CLAUSE_IDS.create_default_status, PRECONDITION, why, CLAUSE_IDS.create_created)
    with judge(CLAUSE_IDS.create_default_status):
        pet = expect.parse_json(answer)
        if isinstance(pet, dict) and "status" in pet and pet["status"] not in store.STATUSES:
            raise Mismatch("no status or one of available, pending, sold", f"status {pet['status']!r}", answer.exchange)


def _rejected_cases() -> list[Any]:
    return [
        pytest.param(clause, case, id=case, marks=pytest.mark.clause(clause))
        for clause, cases in REJECTED.items()
        for case in cases
    ]


@pytest.mark.parametrize(("clause", "name"), _rejected_cases())
def test_invalid_new_pet_is_rejected(sent: Sent, judge: Judge, clause: str, name: str) -> None:
    answer = sent[0][f"reject-{name}"]
    with judge(clause):
        expect.status(answer, 400)
    if answer.status == 400:
        with judge(CLAUSE_IDS.errors_body):
            expect.error_body(answer)


@pytest.mark.clause(CLAUSE_IDS.create_reject_json)
@pytest.mark.parametrize("name", REJECTED_RAW)
def test_body_that_is_not_a_json_object_is_rejected(sent: Sent, judge: Judge, name: str) -> None:
    answer = sent[0][f"raw-{name}"]
    with judge(CLAUSE_IDS.create_reject_json):
        expect.status(answer, 400)
    if answer.status == 400:
        with judge(CLAUSE_IDS.errors_body):
            expect.error_body(answer)


@pytest.mark.clause(CLAUSE_IDS.create_reject_json)
@pytest.mark.parametrize("name", writeplan.NOT_UTF8)
def test_a_name_that_is_not_utf8_gets_no_server_error(sent: Sent, judge: Judge, name: str) -> None:
    """RFC 8259 §8.1 (JSON text is UTF-8), §9 (a parser "MAY accept non-JSON forms"): refused with a 4xx
    Error, or taken as the service reads it (201 and a Pet); a 5xx is the service failing on what it was
    sent (§7, RFC 9110 §15.6)."""
    answer = sent[0][f"raw-{name}"]
    with judge(CLAUSE_IDS.create_reject_json):
        expect.no_server_error(answer)
        if answer.status == 201:
            expect.pet(expect.parse_json(answer), "the created animal", answer.exchange)
        elif not 400 <= answer.status < 500:
            expect.status(answer, 201, 400)
    if 400 <= answer.status < 500:
        with judge(CLAUSE_IDS.errors_body):
            expect.error_body(answer)
