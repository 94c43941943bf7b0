"""One run of the contract suite: its target, mode, profile, seed, budget and transport, in one place.

The plugin builds a ``Run`` once per process from the command line, the environment and
``pyproject.toml`` (``RunSettings``); xdist workers get the controller's settings (never the
key: they read it from its variable) and share one deadline, one circuit breaker and one
set-up through ``shared_dir``.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, fields
from functools import cache
from itertools import count
from pathlib import Path
from typing import Any, TypeVar

from schemathesis import GenerationMode
from schemathesis.errors import FailureGroup

from petstore_contract import __version__, coverage, generated, har, profiles
from petstore_contract.api import VALID, Api, Row, answers_from_data, answers_to_data
from petstore_contract.record import Exchange, Finding, Violation
from petstore_contract.redaction import KeyFragments, Redactor
from petstore_contract.spec import schema_errors, spec_checksum
from petstore_contract.target import Target
from petstore_contract.transport import Batch, RunGuard, TargetProblem, Transport, TransportOptions

DEFAULT_TIMEOUT = 10.0
DEFAULT_CONCURRENCY = 16
ONCE_WAIT = 0.05
T = TypeVar("T")
FAILED, FAILED_KIND = "__failed__", "__failed_kind__"  # set-up that failed, as its result file says


@dataclass(frozen=True)
class RunSettings:
    """Everything that defines a run, as plain data (shipped to xdist workers without the key)."""

    target_name: str
    base_url: str
    key_env: str
    read_only: bool
    profile: str = "default"
    seed: int = profiles.DEFAULT_SEED
    run_id: str = ""
    timeout: float = DEFAULT_TIMEOUT
    max_body_bytes: int = 4_000_000
    trip_after: int = 3
    budget: float | None = None
    deadline: float | None = None
    concurrency: int = DEFAULT_CONCURRENCY
    verify: bool | str = True
    client_cert: str | None = None
    client_key: str | None = None
    use_proxy_env: bool = True
    shared_dir: str = ""
    started: float = field(default_factory=time.time)
    record_dir: str = ""  # keep every exchange there (har.Recorder), for a certification bundle

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class Run:
    def __init__(self, settings: RunSettings, api_key: str) -> None:
        self.settings = settings
        self.target = Target(settings.target_name, settings.base_url, api_key, settings.read_only, settings.key_env)
        self.redact = Redactor(api_key, settings.key_env)
        # The transport's options are the run's settings of the same name (one place for each value).
        shared = {f.name: getattr(settings, f.name) for f in fields(TransportOptions) if hasattr(settings, f.name)}
        options = TransportOptions(**{**shared, "api_key": api_key, "shared_dir": settings.shared_dir or None})
        self.guard = RunGuard.from_options(options)
        self.transport = Transport(options, self.guard, self.redact)
        self.api = Api(self.transport, api_key)
        # What the run exercised (coverage.py), tallied in every process beside its counters.
        self.coverage = coverage.Tally(api_key)
        self.transport.adapter.watchers.append(self.coverage)
        self.guard.tallies["coverage"] = self.coverage.to_dict
        self.recorder = har.Recorder(settings.record_dir, self._scrub(api_key)) if settings.record_dir else None
        if self.recorder is not None:
            self.transport.adapter.watchers.append(self.recorder)
        self._names = count()
        self.deferred: Batch[Any, list[Finding]] | None = None
        self._asked: set[str] = set()  # what the deferred test's cases sent so far (digests)
        self._background: dict[str, Future[Any]] = {}
        self._starter: ThreadPoolExecutor | None = None
        self._cases_wait_for = ""
        self._examined: dict[str, int] = {}  # judgements of generated cases, by clause (``take_examined``)
        self._examined_lock = threading.Lock()
        # Generated creates this process may still send (None: no limit); see ``limit_generated_creates``.
        self._creates_left: int | None = None
        # False in a child process of the run (sidecar.py): it only reads what the parent set up,
        # so that stopping it can never leave set-up half done for the others.
        self.produces_shared = True

    def _scrub(self, api_key: str) -> Callable[[str], str]:
        """How a kept exchange is redacted: as every recorded exchange, and near misses of the key too."""
        fragments = KeyFragments(api_key)
        return lambda text: fragments(self.redact.for_exchange(text))

    # -- what the run is -------------------------------------------------------------------------

    @property
    def read_only(self) -> bool:
        return self.settings.read_only

    @property
    def profile(self) -> profiles.Profile:
        return profiles.PROFILES[self.settings.profile]

    def facts(self) -> dict[str, Any]:
        """What a report may say about the run (never the key)."""
        s = self.settings
        return {
            "target": s.target_name,
            "base_url": s.base_url,
            "mode": "read-only" if s.read_only else "read-write",
            "profile": s.profile,
            "seed": s.seed,
            "run_id": s.run_id,
            "concurrency": s.concurrency,
            "key_env": s.key_env,
            "suite_version": __version__,
            "spec_sha256": spec_checksum(),
            "replay": self.replay_command(),
        }

    def replay_command(self) -> str:
        """The command that asks the same questions again (the key stays in its variable)."""
        s = self.settings
        target = f"--contract-target {s.target_name}" if s.target_name in ("staging", "production") else ""
        url = "" if target or s.target_name == "embedded" else f"--base-url {s.base_url}"
        parts = ["pytest --pyargs petstore_contract.suite", target, url, f"--contract-profile {s.profile}"]
        parts += [f"--contract-seed {s.seed}", "--contract-read-only" if s.read_only else ""]
        return " ".join(p for p in parts if p)

    # -- the suite's own data ----------------------------------------------------------------------

    def name(self, tag: str) -> str:
        """A name carrying the run's id, so the suite's animals are recognisable and new.  Short (at most
        about 25 characters): name rules are not shown (§2), and a service may refuse long names."""
        return f"pc-{self.settings.run_id}-{tag}"

    def new_pet(self, tag: str, status: str | None, **fields: Any) -> dict[str, Any]:
        body: dict[str, Any] = {"name": self.name(f"{tag}-{os.getpid() % 1000}-{next(self._names)}"), "categoryId": 1}
        body.update(fields)
        if status is not None:
            body["status"] = status
        return body

    def once(self, key: str, produce: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """``produce()`` once per run, whichever process asks first; the others read its result."""
        if not self.settings.shared_dir:
            return produce()
        result = Path(self.settings.shared_dir) / f"{key}.json"
        if not self.produces_shared:
            return self._wait_for(result)
        try:
            fd = os.open(str(result) + ".lock", os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return self._wait_for(result)
        os.close(fd)
        try:
            data = produce()
        except TargetProblem as problem:
            _publish(result, {FAILED: str(problem), FAILED_KIND: problem.kind})  # the others fail alike
            raise
        except Exception as error:
            _publish(result, {FAILED: f"{type(error).__name__}: {error}", FAILED_KIND: ""})
            raise
        _publish(result, data)
        return data

    def once_answers(self, key: str, send: Callable[[], dict[str, Row]]) -> dict[str, Row]:
        """A table of requests sent once per run (under xdist too); every process judges the same answers."""
        return answers_from_data(self.once(key, lambda: answers_to_data(send())))

    def _wait_for(self, result: Path) -> dict[str, Any]:
        limit = self.settings.deadline or time.time() + 600
        while not result.exists():
            if time.time() > limit:
                raise TargetProblem(f"set-up by another worker did not finish ({result.name})", kind="budget")
            time.sleep(ONCE_WAIT)
        loaded: dict[str, Any] = json.loads(result.read_text(encoding="utf-8"))
        if FAILED in loaded:
            if loaded[FAILED_KIND]:
                raise TargetProblem(loaded[FAILED], kind=loaded[FAILED_KIND])
            raise RuntimeError(f"set-up failed in another worker: {loaded[FAILED]}")
        return loaded

    # -- work started ahead of the test that needs it -------------------------------------------------

    def start(self, key: str, produce: Callable[[], Any]) -> None:
        """``produce()`` in a background thread from now on (once per key); ``result_of`` waits for it.

        One thread: what is started ahead runs in the order it was started.  It must not draw
        with Hypothesis (CPython 3.11 cannot run Hypothesis in two threads at once).
        """
        if key in self._background:
            return
        if self._starter is None:
            self._starter = ThreadPoolExecutor(max_workers=1, thread_name_prefix="petstore-ahead")
        self._background[key] = self._starter.submit(produce)

    def result_of(self, key: str, produce: Callable[[], T]) -> T:
        """What was started for ``key`` (its exception, if it raised), or ``produce()`` now if nothing was."""
        future = self._background.get(key)
        result: T = produce() if future is None else future.result()
        return result

    def close(self) -> None:
        if self._starter is not None:
            self._starter.shutdown(wait=True, cancel_futures=True)
        self.transport.close()
        if self.recorder is not None:
            self.recorder.close()

    # -- generated tests ---------------------------------------------------------------------------

    def schema(self, mode: GenerationMode) -> Any:
        return _schema(mode, self.settings.seed, self.profile.max_examples, self.read_only)

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

    def call_kwargs(self) -> dict[str, Any]:
        return {
            "base_url": self.settings.base_url,
            "headers": {"Authorization": self.api.fill(VALID)},
            "timeout": self.settings.timeout,
            "session": self.transport.session(),
        }

    def call_and_judge(self, case: Any) -> None:
        """Send and judge a generated case; while ``deferring``, send it on the pool (see ``judge_deferred``).

        A case that would add an animal goes out only while the run's allowance of generated
        creates lasts (``limit_generated_creates``)."""
        if self.deferred is not None:
            if not self._asked_before(case):
                self.deferred.submit(case)
            return
        if not self._may_create(case):
            return
        response = case.call(**self.call_kwargs())
        self.judge_response(case, response)

    def limit_generated_creates(self, allowed: int) -> None:
        """At most ``allowed`` more generated cases that create an animal, in this process (set-up
        calls it for a store it cannot see whole: every animal added stays there)."""
        with self._examined_lock:
            self._creates_left = allowed

    def _may_create(self, case: Any) -> bool:
        """False once the allowance is spent, for a POST whose body is a valid NewPet (in either
        generation mode: a negative case may break only a header or the query, and create)."""
        if str(case.method).upper() != "POST" or schema_errors("NewPet", case.body):
            return True
        with self._examined_lock:
            if self._creates_left is None:
                return True
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
        return self._cases_wait_for in self._background

    def _judged(self, case: Any) -> list[Finding]:
        held = self._background.get(self._cases_wait_for) if self._cases_wait_for else None
        if held is not None:
            held.result()  # raises what set-up raised: the case is not sent
        if not self._may_create(case):
            return []
        try:
            self.judge_response(case, case.call(**self.call_kwargs()))
        except Violation as violation:
            return list(violation.findings)
        return []

    def take_examined(self) -> dict[str, int]:
        """The judgements of generated cases since the last call, by clause (and start counting anew)."""
        with self._examined_lock:
            taken, self._examined = self._examined, {}
        return taken

    def _count_examined(self, status: int) -> None:
        # What Schemathesis' checks and ours judge on an answer of this status (see test_generated.py).
        clauses = ["responses.documented", "json.content-type"]
        clauses += ["errors.body"] if status >= 400 else []
        clauses += ["auth.challenge"] if status == 401 else []
        with self._examined_lock:
            for clause in clauses:
                self._examined[clause] = self._examined.get(clause, 0) + 1

    def judge_response(self, case: Any, response: Any, validate: Callable[[], None] | None = None) -> None:
        """Schemathesis' checks and ours on one answer; its failures become findings on their clauses.

        A 429 that outlasted its waits is not judged: the target did not process the request."""
        if response.status_code == 429:
            return
        self._count_examined(response.status_code)
        try:
            if validate is None:
                case.validate_response(response, additional_checks=generated.CUSTOM_CHECKS)
            else:
                validate()
        except FailureGroup as group:
            findings = generated.findings_of(group, case, response, self.redact.for_exchange, self.api.fill(VALID))
            raise Violation(*findings) from None

    def exchange_of(self, response: Any) -> Exchange:
        return generated.exchange_of(response, self.redact.for_exchange)


def _publish(result: Path, data: dict[str, Any]) -> None:
    partial = result.with_suffix(".part")
    partial.write_text(json.dumps(data), encoding="utf-8")
    partial.replace(result)


@cache
def _schema(mode: GenerationMode, seed: int, max_examples: int, read_only: bool) -> Any:
    return generated.load_schema(mode, seed=seed, max_examples=max_examples, read_only=read_only)


_current: Run | None = None


def active_run() -> Run | None:
    """The run of this process, or None outside a contract run."""
    return _current


def current_run() -> Run:
    if _current is None:
        raise RuntimeError("no contract run in this process (the plugin builds it in pytest_configure)")
    return _current


def install(run: Run | None) -> None:
    global _current
    _current = run
