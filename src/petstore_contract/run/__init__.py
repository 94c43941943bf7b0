"""One run of the contract suite: its target, mode, profile, seed, budget and transport, in one place.

The plugin builds a ``Run`` once per process from the command line, the environment and
``pyproject.toml`` (``RunSettings``); xdist workers get the controller's settings (never the
key: they read it from its variable) and share one deadline, one circuit breaker and one
set-up through ``shared_dir`` (``transport.shared``).

The modules: ``target`` and ``profiles`` (which target, key variable and mode; depth profiles),
``setup`` (set-up: the suite's own data on the target, and what it learns of the store),
``setup_records`` (what set-up created and learnt, as frozen records, and their trip between processes), ``lookup``
(a set-up create whose answer was lost, looked up by its unique name),
``writeplan`` (the valid bodies set-up creates first, merged into few bodies on a crowded store),
``ahead`` (work sent ahead of the tests: request tables and stateful walks) on the one thread of
``background``, ``cases`` (the generated tests' cases: drawn, sent side by side, judged), ``walks``
(the stateful walks: drawn in the main thread, sent as chains on the run's pool), ``api`` (the
targeted tests' vocabulary), ``selection`` (which tests a run selected), ``heap`` (the garbage
collector during a run), ``preflight`` (before any test: whether the target can be judged at all).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from itertools import count
from pathlib import Path
from typing import Any, TypeVar

from petstore_contract import __version__
from petstore_contract.core import replay
from petstore_contract.core.redaction import KeyFragments, Redactor
from petstore_contract.defaults import DEFAULT_CIRCUIT_BREAKER, DEFAULT_MAX_BODY_BYTES
from petstore_contract.defaults import DEFAULT_CONCURRENCY as DEFAULT_CONCURRENCY
from petstore_contract.defaults import DEFAULT_TIMEOUT as DEFAULT_TIMEOUT
from petstore_contract.interface.jsontypes import JsonObject, JsonValue
from petstore_contract.interface.spec import spec_checksum
from petstore_contract.judging import coverage, pipeline
from petstore_contract.run import profiles
from petstore_contract.run.api import Api, Row, answers_from_data, answers_to_data
from petstore_contract.run.background import Background, Stoppable
from petstore_contract.run.cases import GeneratedCases
from petstore_contract.run.selection import EVERY_WRITE
from petstore_contract.run.target import Target
from petstore_contract.transport import RunGuard, TargetProblem, Transport, TransportOptions, har
from petstore_contract.transport.shared import publish
from petstore_contract.versions import version_facts

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
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    circuit_breaker: int = DEFAULT_CIRCUIT_BREAKER
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

    def to_dict(self) -> JsonObject:
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
        # Every answer judged by the checks that apply to it, whichever part of the run asked (pipeline.py).
        self.pipeline = pipeline.Pipeline(api_key, self.redact, settings.run_id)
        self.transport.adapter.watchers.append(self.pipeline)
        self.guard.tallies["pipeline"] = self.pipeline.to_dict
        self.recorder = har.Recorder(settings.record_dir, self._scrub(api_key)) if settings.record_dir else None
        if self.recorder is not None:
            self.transport.adapter.watchers.append(self.recorder)
        self._names = count()
        # The parts of set-up's plan of writes the selected tests need (``writeplan.needed``): every part
        # until the selection is known, which is all a run of the whole suite ever knows.
        self.set_up_writes: frozenset[str] = EVERY_WRITE
        self.background = Background()
        self.cases = GeneratedCases(settings, self.profile.max_examples, self.api, self.background, self.redact)

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

    def facts(self) -> JsonObject:
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
            **version_facts(),  # the judge: the same seed sends the same requests only with the same releases
            "spec_sha256": spec_checksum(),
            "replay": self.replay_command(),
        }

    def replay_command(self) -> str:
        """The command that asks the same questions again, where the run was made (the key stays in its
        variable): a named target by its name (its key variable and mode), with the URL it had."""
        s = self.settings
        options: list[tuple[str, str | None]] = []
        if s.target_name not in ("embedded", "custom"):
            options.append(("--contract-target", s.target_name))
        if s.target_name != "embedded":  # the embedded reference is started anew, on another port
            options.append(("--base-url", s.base_url))
        options += [("--contract-profile", s.profile), ("--contract-seed", str(s.seed))]
        if s.read_only:
            options.append(("--contract-read-only", None))
        elif s.target_name not in ("embedded", "custom"):  # a named target may be read-only unless told
            options.append(("--contract-allow-writes", None))
        return replay.rerun(replay.suite_program(), options)

    # -- the suite's own data ----------------------------------------------------------------------

    def name(self, tag: str) -> str:
        """A name carrying the run's id, so the suite's animals are recognisable and new.  Short (at most
        about 25 characters): name rules are not shown (§2), and a service may refuse long names."""
        return f"pc-{self.settings.run_id}-{tag}"

    def new_pet(self, tag: str, status: str | None, **fields: JsonValue) -> JsonObject:
        body: JsonObject = {"name": self.name(f"{tag}-{os.getpid() % 1000}-{next(self._names)}"), "categoryId": 1}
        body.update(fields)
        if status is not None:
            body["status"] = status
        return body

    def once(self, key: str, produce: Callable[[], JsonObject]) -> JsonObject:
        """``produce()`` once per run, whichever process asks first; the others read its result."""
        if not self.settings.shared_dir:
            return produce()
        result = Path(self.settings.shared_dir) / f"{key}.json"
        try:
            fd = os.open(str(result) + ".lock", os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return self._wait_for(result)
        os.close(fd)
        try:
            data = produce()
        except TargetProblem as problem:
            publish(result, json.dumps({FAILED: str(problem), FAILED_KIND: problem.kind}))  # the others fail alike
            raise
        except Exception as error:
            publish(result, json.dumps({FAILED: f"{type(error).__name__}: {error}", FAILED_KIND: ""}))
            raise
        publish(result, json.dumps(data))
        return data

    def once_answers(self, key: str, send: Callable[[], dict[str, Row]]) -> dict[str, Row]:
        """A table of requests sent once per run (under xdist too); every process judges the same answers."""
        return answers_from_data(self.once(key, lambda: answers_to_data(send())))

    def _wait_for(self, result: Path) -> JsonObject:
        limit = self.settings.deadline or time.time() + 600
        while not result.exists():
            if time.time() > limit:
                raise TargetProblem(f"set-up by another worker did not finish ({result.name})", kind="budget")
            time.sleep(ONCE_WAIT)
        loaded: JsonValue = json.loads(result.read_text(encoding="utf-8"))
        if not isinstance(loaded, dict):
            raise RuntimeError(f"set-up's result is no JSON object ({result.name})")
        if FAILED in loaded:
            failed, kind = str(loaded[FAILED]), loaded.get(FAILED_KIND)
            if kind:
                raise TargetProblem(failed, kind=str(kind))
            raise RuntimeError(f"set-up failed in another worker: {failed}")
        return loaded

    # -- work started ahead of the test that needs it -------------------------------------------------

    def start(self, key: str, produce: Callable[[], Any]) -> None:
        """``produce()`` in the run's background thread (see ``background.Background.start``)."""
        self.background.start(key, produce)

    def result_of(self, key: str, produce: Callable[[], T]) -> T:
        return self.background.result_of(key, produce)

    @property
    def started(self) -> dict[str, Stoppable]:
        """Work started ahead on the run's pool, by key (see ``ahead.started_ahead``); stopped at the end."""
        return self.background.started

    def close(self) -> None:
        self.background.close()
        self.transport.close()
        if self.recorder is not None:
            self.recorder.close()


# The contract run of this process: its one home (the plugin installs it when a session configures and
# removes it when the session ends; ``plugin.run_of`` and the generated tests read it here).
_current: Run | None = None


def active_run() -> Run | None:
    """The contract run of this process, or None outside one."""
    return _current


def current_run() -> Run:
    if _current is None:
        raise RuntimeError("no contract run in this process (the plugin builds it in pytest_configure)")
    return _current


def install(run: Run | None) -> None:
    global _current
    _current = run
