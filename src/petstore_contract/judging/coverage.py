"""What the run exercised: each documented answer and each documented parameter value, asked and seen.

QA's question is not "did the checks pass" but "what was actually exercised": a documented status the
target never answered is *not observed*, never "passed".  Every process of the run has a ``Tally``
watching its transport (``GuardedAdapter.watchers``): per request, the answer the request was
*meant* to produce (its intent, from the request alone) and the answer it got.  The tallies travel
with the process's counters (``RunGuard.tallies``) and ``report`` merges them into the run's coverage.

Intent, as the interface document says it (§4, §5, §7):

- a request without the valid key in the documented form (``Bearer <key>``, the scheme in any case)
  is meant to get 401, on every operation;
- with it: ``GET /pets`` with ``limit`` absent or 1..100 and ``status`` absent or a PetStatus: 200;
  ``POST /pets`` with a NewPet body: 201, with any other body: 400; ``GET /pets/{petId}`` for an id
  the run had seen handed out (created, or listed) before it asked: 200, for any other int64 id:
  404; ``GET /store/orders``: a success whose status the document does not show;
- anything else (a ``limit`` out of bounds, a malformed id) is meant to be refused in a way the
  document leaves open: it counts toward no documented answer.

Parameters of ``GET /pets`` (with the valid key and an otherwise valid query): ``limit`` absent
(default 20), at its bounds 1 and 100, or another value within them; ``status`` absent or each
PetStatus value; each asked, and answered 200 or not.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from petstore_contract.core.records import NOT_SELECTED, UNDECIDED, ClauseResult
from petstore_contract.interface.clauses import CLAUSE_IDS
from petstore_contract.interface.document import INT64_MAX, INT64_MIN, STATUSES
from petstore_contract.interface.jsontypes import JsonObject, JsonValue
from petstore_contract.interface.spec import operation_of
from petstore_contract.transport import COUNTERS_GLOB, Observed

LIST, CREATE, READ, ORDERS = "GET /pets", "POST /pets", "GET /pets/{petId}", "GET /store/orders"
NOT_SHOWN = "not shown"  # GET /store/orders: §4.4 shows no status
OTHER_INTENT = "other"  # meant to be refused in a way the document leaves open
NO_ANSWER = "none"
# The documented answers (§4.1-§4.4, §7): operation -> statuses.
DOCUMENTED: dict[str, tuple[str, ...]] = {
    LIST: ("200", "401"),
    CREATE: ("201", "400", "401"),
    READ: ("200", "401", "404"),
    ORDERS: (NOT_SHOWN, "401"),
}
# The documented values of GET /pets' parameters: (parameter, value) rows in order.
PARAMETER_ROWS: tuple[tuple[str, str], ...] = (
    ("limit", "absent (default 20)"),
    ("limit", "1 (minimum)"),
    ("limit", "100 (maximum)"),
    ("limit", "2..99"),
    ("status", "absent"),
    *(("status", value) for value in STATUSES),
)
# A clause whose undecided note says why an answer was not observed.
CLAUSE_OF: dict[tuple[str, str], str] = {
    (READ, "404"): CLAUSE_IDS.read_not_found,
    (READ, "200"): CLAUSE_IDS.read_found,
    (CREATE, "201"): CLAUSE_IDS.create_created,
    (CREATE, "400"): CLAUSE_IDS.create_reject_required,
    (LIST, "200"): CLAUSE_IDS.list_shape,
    (ORDERS, NOT_SHOWN): CLAUSE_IDS.orders_available,
}
MISSING_KEY = CLAUSE_IDS.auth_missing  # the clause of every operation's 401: a request without the key


def _ids_listed(seen: Observed) -> list[int]:
    """The ids of a list answer (or of one created Pet), ignoring whatever is not a Pet."""
    if seen.answer is None:
        return []
    try:
        data = seen.answer.json()
    except (ValueError, RecursionError):
        return []
    items = data if isinstance(data, list) else [data]
    ids = [item.get("id") if isinstance(item, dict) else None for item in items]
    return [pet_id for pet_id in ids if isinstance(pet_id, int) and type(pet_id) is int]


class Tally:
    """One process's tally (a watcher of its adapter): intents and answers, plain data for ``to_dict``."""

    def __init__(self, api_key: str) -> None:
        self.key = api_key
        self._lock = threading.Lock()
        self.answers: Counter[str] = Counter()  # "operation|intent|status"
        self.parameters: Counter[str] = Counter()  # "parameter|value|status"
        self.reads: list[tuple[int, float, str]] = []  # GET /pets/{id} with the valid key: id, when, status
        self.handed: dict[int, float] = {}  # ids seen created or listed: when first seen

    def __call__(self, seen: Observed) -> None:
        request = seen.request
        operation = operation_of(request.method or "GET", request.url or "")
        status = str(seen.answer.status) if seen.answer is not None else NO_ANSWER
        valid = self._valid(request.headers.get("Authorization"))
        with self._lock:
            self._count(operation, valid, seen, status)

    def _valid(self, header: str | None) -> bool:
        scheme, _, token = (header or "").partition(" ")
        return scheme.lower() == "bearer" and token == self.key

    def _count(self, operation: str, valid: bool, seen: Observed, status: str) -> None:
        if not valid:
            self.answers[f"{operation}|401|{status}"] += 1
            return
        url = seen.request.url or ""
        if operation == LIST:
            self._list(url, status, seen)
        elif operation == CREATE:
            intent = "201" if new_pet(seen.request.body) else "400"
            self.answers[f"{operation}|{intent}|{status}"] += 1
            if status == "201":
                self._hand_out(_ids_listed(seen), seen.started)
        elif operation == READ:
            self._read(url, status, seen.started)
        elif operation == ORDERS:
            self.answers[f"{operation}|{NOT_SHOWN}|{status}"] += 1

    def _list(self, url: str, status: str, seen: Observed) -> None:
        query = parse_qs(urlsplit(url).query, keep_blank_values=True)
        limit, state = _limit_row(query.get("limit")), _status_row(query.get("status"))
        intent = "200" if limit and state else OTHER_INTENT
        self.answers[f"{LIST}|{intent}|{status}"] += 1
        if intent == "200":  # a value counts where the rest of the query is valid too
            self.parameters[f"limit|{limit}|{status}"] += 1
            self.parameters[f"status|{state}|{status}"] += 1
        if status == "200":
            self._hand_out(_ids_listed(seen), seen.started)

    def _read(self, url: str, status: str, started: float) -> None:
        segment = unquote(urlsplit(url).path.rstrip("/").rsplit("/", 1)[-1])
        try:
            pet_id = int(segment, 10) if segment.lstrip("-").isdigit() else None
        except ValueError:
            pet_id = None
        if pet_id is None or not INT64_MIN <= pet_id <= INT64_MAX:
            self.answers[f"{READ}|{OTHER_INTENT}|{status}"] += 1
            return
        self.reads.append((pet_id, started, status))  # 200 or 404: decided once every process is merged

    def _hand_out(self, ids: list[int], when: float) -> None:
        for pet_id in ids:
            if pet_id not in self.handed or when < self.handed[pet_id]:
                self.handed[pet_id] = when

    def to_dict(self) -> JsonObject:
        with self._lock:
            return {
                "answers": dict[str, JsonValue](self.answers),
                "parameters": dict[str, JsonValue](self.parameters),
                "reads": [[pet_id, started, status] for pet_id, started, status in self.reads],
                "handed": {str(k): v for k, v in self.handed.items()},
            }


def _limit_row(values: list[str] | None) -> str:
    """The row of a limit value, "" when out of the documented bounds (or given twice)."""
    if values is None:
        return "absent (default 20)"
    if len(values) != 1 or not values[0].isdigit():
        return ""
    limit = int(values[0])
    return {1: "1 (minimum)", 100: "100 (maximum)"}.get(limit, "2..99" if 1 < limit < 100 else "")


def _status_row(values: list[str] | None) -> str:
    if values is None:
        return "absent"
    return values[0] if len(values) == 1 and values[0] in STATUSES else ""


def new_pet(body: Any) -> bool:
    """A NewPet (§2): an object with a string name, an integer categoryId, and a PetStatus or none."""
    try:
        data = json.loads(body) if body else None
    except (ValueError, TypeError):
        return False
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        return False
    category = data.get("categoryId")
    if type(category) is not int or not INT64_MIN <= category <= INT64_MAX:
        return False
    return "status" not in data or data["status"] in STATUSES


# -- the run's coverage -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Merged:
    """Every process's tally as one: each answer by "operation|intent|status", each parameter value's."""

    answers: Counter[str]
    parameters: Counter[str]


def merge(directory: str | Path) -> Merged:
    """Every process's tally (written beside its counters), as one."""
    answers: Counter[str] = Counter()
    parameters: Counter[str] = Counter()
    reads: list[tuple[int, float, str]] = []
    handed: dict[int, float] = {}
    for path in sorted(Path(directory).glob(COUNTERS_GLOB)):
        tally = json.loads(path.read_text(encoding="utf-8")).get("coverage")
        if not isinstance(tally, dict):
            continue
        answers.update(tally["answers"])
        parameters.update(tally["parameters"])
        reads += [(int(i), float(t), str(s)) for i, t, s in tally["reads"]]
        for pet_id, when in tally["handed"].items():
            handed[int(pet_id)] = min(when, handed.get(int(pet_id), when))
    for pet_id, when, status in reads:  # an id seen handed out before it was asked is meant to be found
        intent = "200" if pet_id in handed and handed[pet_id] <= when else "404"
        answers[f"{READ}|{intent}|{status}"] += 1
    return Merged(answers, parameters)


def report(merged: Merged, clauses: list[ClauseResult], read_only: bool) -> JsonObject:
    """The coverage of summary.json: per operation and documented status, per parameter value."""
    by_key = {c.id: c for c in clauses}
    responses = [
        _response_row(operation, status, merged.answers, by_key, read_only)
        for operation, statuses in DOCUMENTED.items()
        for status in statuses
    ]
    parameters = [_parameter_row(name, value, merged.parameters) for name, value in PARAMETER_ROWS]
    missing: list[JsonValue] = [f"{r['operation']} {r['status']}: {r['why']}" for r in responses if not r["observed"]]
    missing += [f"GET /pets {r['parameter']}={r['value']}: {r['why']}" for r in parameters if not r["observed"]]
    rows: tuple[list[JsonValue], list[JsonValue]] = (list(responses), list(parameters))
    return {"responses": rows[0], "parameters": rows[1], "not_observed": missing}


def _split(key: str) -> tuple[str, str, str]:
    operation, intent, status = key.split("|")
    return operation, intent, status


def _response_row(
    operation: str, status: str, answers: Counter[str], clauses: dict[str, ClauseResult], read_only: bool
) -> JsonObject:
    meant: Counter[str] = Counter()  # the answers to the requests meant to produce ``status``
    got: Counter[str] = Counter()  # every answer of the operation
    for key, count in answers.items():
        asked_of, intent, answer = _split(key)
        if asked_of == operation:
            got[answer] += count
            if intent == status:
                meant[answer] += count
    successes = sum(n for s, n in got.items() if s.startswith("2"))  # NOT_SHOWN: any success answers it
    answered = successes if status == NOT_SHOWN else got.get(status, 0)
    return {
        "operation": operation,
        "status": status,
        "asked": sum(meant.values()),
        "answered": answered,
        "observed": answered > 0,
        "answers_to_those_asked": dict[str, JsonValue](sorted(meant.items())),
        "why": "" if answered > 0 else _why_not(operation, status, meant, clauses, read_only),
    }


def _why_not(
    operation: str, status: str, meant: Counter[str], clauses: dict[str, ClauseResult], read_only: bool
) -> str:
    if not meant:
        if operation == CREATE and read_only:
            why = "read-only run: no POST was sent"
        elif (operation, status) == (READ, "404"):
            why = "no id the run had not seen handed out was asked"
        else:
            why = "the run sent no request meant to produce it"
    else:
        why = _asked_and_answered(meant)
    # Only what the run observed: the clause that asks for this answer, undecided or not selected.
    clause = clauses.get(CLAUSE_OF.get((operation, status), "") or (MISSING_KEY if status == "401" else ""))
    if clause is not None and clause.outcome == UNDECIDED and clause.notes:
        return why + f" ({clause.id} undecided: {clause.notes[0].reason})"
    if clause is not None and clause.outcome == NOT_SELECTED and not meant and not read_only:
        return why + f" ({clause.id}: its tests were not selected)"
    return why


def _asked_and_answered(answers: Counter[str]) -> str:
    """How often a request was asked and what the target answered, the most frequent answers first."""
    shown = ", ".join(f"{status} \u00d7{n}" for status, n in answers.most_common(4))
    return f"asked {sum(answers.values())} times; the target answered {shown}"


def _parameter_row(name: str, value: str, parameters: Counter[str]) -> JsonObject:
    seen = Counter({k.split("|")[2]: n for k, n in parameters.items() if k.split("|")[:2] == [name, value]})
    answered = seen.get("200", 0)
    return {
        "operation": LIST,
        "parameter": name,
        "value": value,
        "asked": sum(seen.values()),
        "answered": answered,
        "observed": answered > 0,
        "answers": dict[str, JsonValue](sorted(seen.items())),
        "why": "" if answered > 0 else _asked_and_answered(seen) if seen else "never asked",
    }
