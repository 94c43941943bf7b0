"""A refusal changes nothing, whatever its reason (issue 40): every create of the run the service refused,
held against every animal it shows.

§4.2 answers a body it will not take with a 400 Error; §5.3 a request without the key with a 401; HTTP
a body in another media type or too large with a 4xx (``interface/silence.py``).  None of them adds an
animal.  A service that validates after it stores, or stores before it reads the key, answers the
refusal and still lists the animal.  Each of the suite's own creates carries a name of the run's own
(``pc-<run id>-...``), so an animal shown later under the name of a refused create, and of no accepted
one, came from the refusal: ``create.reject.nothing-created``, wherever the run saw it (a page, a read,
a generated answer).  Where the run saw no such animal nothing is concluded (the clause's own test
decides it where the store is seen whole).

Judged once every answer is in (``findings``, at the end of the process): a name refused once and
accepted once (a service that refuses a name it holds already: name rules are not shown) is no
finding, whichever of its answers came first.
"""

from __future__ import annotations

import json
import re
import threading

from petstore_contract.core.records import Finding
from petstore_contract.interface.clauses import CLAUSE_IDS
from petstore_contract.interface.jsontypes import JsonValue
from petstore_contract.judging import expect
from petstore_contract.judging.declaration import Kind
from petstore_contract.transport.answers import Answer

CLAUSE = CLAUSE_IDS.create_reject_nothing_created
KEPT = 200  # names whose first sighting is kept as evidence: the run's own animals, a few hundred


class Refusals:
    """One process's refused and accepted creates of the run's own names, and where each name was shown."""

    def __init__(self, own_name: re.Pattern[str] | None, test: str) -> None:
        self.own_name, self.test = own_name, test
        self.refused: dict[str, Answer] = {}  # name -> the refusal's answer (its exchange built when needed)
        self.accepted: set[str] = set()
        self.shown: dict[str, Answer] = {}  # name -> the first answer that showed an animal of that name
        self._lock = threading.Lock()

    def create_answered(self, body: bytes | str | None, status: int, answer: Answer) -> None:
        """A POST /pets answered: a name of the run's own refused (a 4xx but a 429) or accepted (a 2xx)."""
        name = self._own(body)
        if name is None:
            return
        with self._lock:
            if 200 <= status < 300:
                self.accepted.add(name)
            elif 400 <= status < 500 and status != 429:
                self.refused.setdefault(name, answer)

    def animals_shown(self, pets: list[JsonValue], answer: Answer) -> None:
        """Animals in an answer (a page, a read): the first sighting of each of the run's own names."""
        if self.own_name is None:
            return
        with self._lock:
            for pet in pets:
                name = pet.get("name") if isinstance(pet, dict) else None
                if not isinstance(name, str) or name in self.shown or len(self.shown) >= KEPT:
                    continue
                if self.own_name.fullmatch(name):
                    self.shown[name] = answer

    def findings(self) -> list[Finding]:
        """An animal shown under the name of a refused create and of no accepted one."""
        with self._lock:
            stored = [n for n in self.refused if n in self.shown and n not in self.accepted]
            found = []
            for name in stored[:3]:
                refusal = self.refused[name].exchange
                expected = (
                    f"no animal from POST /pets refused with HTTP {refusal.status} (a refusal changes nothing: "
                    f"§4.2, §5.3)"
                )
                observed = f"an animal named {expect.short(name, 60)} shown after the refusal"
                found.append(
                    Finding(
                        CLAUSE,
                        expected,
                        observed,
                        self.shown[name].exchange,
                        self.test,
                        Kind.SAME_FIELD.expectation("name"),
                    )
                )
            return found

    def _own(self, body: bytes | str | None) -> str | None:
        if self.own_name is None or not body:
            return None
        try:
            data = json.loads(body)
        except (ValueError, TypeError, RecursionError):
            return None
        name = data.get("name") if isinstance(data, dict) else None
        return name if isinstance(name, str) and self.own_name.fullmatch(name) else None
