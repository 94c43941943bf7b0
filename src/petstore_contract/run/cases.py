"""The generated (Schemathesis) tests' cases: drawn, sent side by side, judged, each failure on its clause.

While a test draws its cases (``defer``), each goes out as it is drawn on the run's bounded pool and
is judged there; ``judge_deferred`` then raises every finding.  Cases wait for set-up before they go
out (``hold_cases_until``); a case that would add an animal goes out only while the run's allowance
lasts (``limit_creates``: on a store too large to see whole).
"""

from __future__ import annotations

import threading
from functools import cache
from typing import Any, TypedDict

import requests
from schemathesis import GenerationMode
from schemathesis.errors import FailureGroup

from petstore_contract.core.records import Exchange, Finding, Violation
from petstore_contract.core.redaction import Redactor
from petstore_contract.interface.clauses import CLAUSE_IDS
from petstore_contract.interface.spec import schema_errors
from petstore_contract.judging import custom_checks, generated
from petstore_contract.judging.expect import cut_short
from petstore_contract.run.api import VALID, Api
from petstore_contract.run.background import Background
from petstore_contract.transport import Batch, RunGuard, TargetProblem, Transport, throttling

# A generated case's answer that never completed (RFC 9112 §6.3) is no documented answer of its operation (§4).
CUT_CLAUSE = CLAUSE_IDS.responses_documented


class CallOptions(TypedDict):
    """What every generated case is sent with (``Case.call``): the target, the key, the run's session."""

    base_url: str
    headers: dict[str, str]
    timeout: float
    session: requests.Session


class GeneratedCases:
    """One process's generated cases: their schemas, the deferred batch, the judgements counted."""

    def __init__(self, settings: Any, max_examples: int, api: Api, background: Background, redact: Redactor) -> None:
        self.settings = settings  # the run's RunSettings
        self.max_examples = max_examples
        self.api = api
        self.transport: Transport = api.transport
        self.guard: RunGuard = api.transport.guard
        self.background = background
        self.redact = redact
        self.deferred: Batch[Any, list[Finding]] | None = None
        self._asked: set[str] = set()  # what the deferred test's cases sent so far (digests)
        self._cases_wait_for = ""
        self._examined: dict[str, int] = {}  # judgements of generated cases, by clause (``take_examined``)
        self._examined_lock = threading.Lock()
        # Generated creates this process may still send (None: no limit); see ``limit_creates``.
        self._creates_left: int | None = None

    def schema(self, mode: GenerationMode) -> Any:
        return _schema(mode, self.settings.seed, self.max_examples, self.settings.read_only)

    def load_schemas_ahead(self) -> None:
        """Both generated tests' schemas now (cached for collection): 0.2 s of Python, Schemathesis'
        OpenAPI loader and the spec's YAML, that can fill a wait such as the embedded reference's start-up.

        A spec that does not load is left to collection, which reports it on the generated tests.
        """
        try:
            for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
                self.schema(mode)
        except Exception:  # reported where it belongs: when test_generated.py loads it
            return

    def call_kwargs(self) -> CallOptions:
        return {
            "base_url": self.settings.base_url,
            "headers": {"Authorization": self.api.fill(VALID)},
            "timeout": self.settings.timeout,
            "session": self.transport.session(),
        }

    def call_and_judge(self, case: Any) -> None:
        """Send and judge a generated case; while ``deferring``, send it on the pool (see ``judge_deferred``).

        A case that would add an animal goes out only while the run's allowance of generated
        creates lasts (``limit_creates``)."""
        if self.deferred is not None:
            if not self._asked_before(case):
                self.deferred.submit(case)
            return
        if not self._may_create(case):
            return
        response = case.call(**self.call_kwargs())
        self.judge_response(case, response)

    def limit_creates(self, allowed: int) -> None:
        """At most ``allowed`` more generated cases that create an animal, in this process (set-up
        calls it for a store it cannot see whole: every animal added stays there)."""
        with self._examined_lock:
            self._creates_left = allowed

    def _may_create(self, case: Any) -> bool:
        """False once the allowance is spent, for a POST whose body is a valid NewPet (in either
        generation mode: a negative case may break only a header or the query, and create)."""
        if self._creates_left is None or str(case.method).upper() != "POST" or schema_errors("NewPet", case.body):
            return True  # no allowance (the usual run): no body is validated on this path
        with self._examined_lock:
            if self._creates_left <= 0:
                self.guard.count_held_back()
                return False
            self._creates_left -= 1
            return True

    def _asked_before(self, case: Any) -> bool:
        """The same request was already sent (and judged) in this test: Hypothesis often draws a value
        again, e.g. when it mutates an example into an identical request, or for an operation with
        nothing to vary (GET /store/orders).  Sending it again adds requests, writes and time, not checks."""
        digest = generated.request_fingerprint(case, self.settings.base_url, {"Authorization": self.api.fill(VALID)})
        if digest in self._asked:
            self.guard.count_repeat()
            return True
        self._asked.add(digest)
        return False

    def defer(self) -> None:
        """Hypothesis draws a test's cases without waiting on the network; each goes out as it is drawn,
        unless the test already asked exactly that (see ``_asked_before``)."""
        self.deferred = self.transport.batch(self._judged)
        self._asked = set()

    def judge_deferred(self) -> None:
        """Wait for the test's cases, sent side by side on the run's pool; raise every finding, each on its clause.

        Cases of one operation and mode do not depend on each other, so only their order changes;
        the seed still fixes which requests are sent.  Without a failure to shrink, nothing is lost
        but Hypothesis' shrinking, which the stateful tests forgo as well.
        """
        if self.deferred is None:
            return
        batch, self.deferred = self.deferred, None
        findings = [f for found in batch.results() for f in found]
        if findings:
            distinct = {f.fold_key(): f for f in findings}
            raise Violation(*distinct.values())

    def drop_deferred(self) -> None:
        """The test failed before its cases were judged: wait for those in flight, judge none."""
        batch, self.deferred = self.deferred, None
        if batch is not None:
            batch.close()

    def hold_cases_until(self, key: str) -> None:
        """Generated cases go out only once the work started for ``key`` is done (e.g. set-up);
        Hypothesis draws them meanwhile."""
        self._cases_wait_for = key

    @property
    def cases_held(self) -> bool:
        """Generated cases wait for work started ahead (``hold_cases_until``) before they go out."""
        return self._cases_wait_for in self.background.futures

    def _judged(self, case: Any) -> list[Finding]:
        held = self.background.futures.get(self._cases_wait_for) if self._cases_wait_for else None
        if held is not None:
            held.result()  # raises what set-up raised: the case is not sent
        if not self._may_create(case):
            return []
        try:
            self.judge_response(case, case.call(**self.call_kwargs()))
        except Violation as violation:
            return list(violation.findings)
        except TargetProblem as problem:
            cut = cut_short(problem)
            if cut is None:
                raise  # no answer at all: the test's clauses are undecided (the target could not be asked)
            # An answer that started and never completed is the case's finding, on its answer's clause; the
            # test's other cases are judged all the same (one fault, one clause).
            return [cut.finding(CUT_CLAUSE)]
        return []

    def take_examined(self) -> dict[str, int]:
        """The judgements of generated cases since the last call, by clause (and start counting anew)."""
        with self._examined_lock:
            taken, self._examined = self._examined, {}
        return taken

    def _count_examined(self, status: int, into: dict[str, int] | None) -> None:
        # What Schemathesis' checks and ours judge on an answer of this status (see test_generated.py).
        clauses = [CLAUSE_IDS.responses_documented, CLAUSE_IDS.json_content_type]
        clauses += [CLAUSE_IDS.errors_body] if status >= 400 else []
        clauses += [CLAUSE_IDS.auth_challenge] if status == 401 else []
        examined = self._examined if into is None else into
        with self._examined_lock:
            for clause in clauses:
                examined[clause] = examined.get(clause, 0) + 1

    def judge_response(self, case: Any, response: Any, counts: dict[str, int] | None = None) -> None:
        """Schemathesis' checks and ours on one answer; its failures become findings on their clauses.

        The judgements are counted by clause into ``counts`` when given (work that overlaps other
        tests, such as the stateful walks, counts its own), else for the test running now
        (``take_examined``).  A throttling answer that outlasted its waits (429, 503 with Retry-After) is not
        judged: the target did not handle the request."""
        if throttling(response.status_code, response.headers.get("Retry-After")):
            return
        self._count_examined(response.status_code, counts)
        try:
            case.validate_response(response, additional_checks=custom_checks.CUSTOM_CHECKS)
        except FailureGroup as group:
            findings = generated.findings_of(group, case, response, self.redact.for_exchange, self.api.fill(VALID))
            raise Violation(*findings) from None

    def exchange_of(self, response: Any) -> Exchange:
        return generated.exchange_of(response, self.redact.for_exchange)


@cache
def _schema(mode: GenerationMode, seed: int, max_examples: int, read_only: bool) -> Any:
    return generated.load_schema(mode, seed=seed, max_examples=max_examples, read_only=read_only)
