"""The run's guard: budget, circuit breaker and counters, shared by the run's processes through files."""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import urllib3

from petstore_contract.core import records as record
from petstore_contract.core import wire
from petstore_contract.interface.jsontypes import JsonLike, JsonObject, JsonValue
from petstore_contract.transport.options import TransportOptions
from petstore_contract.transport.problems import BUDGET, TARGET, TargetProblem
from petstore_contract.transport.shared import publish

BREAKER_FILE = "breaker-open"
STOPPED_FILE = "stopped"  # the run was stopped (SIGTERM, SIGHUP): every process of it stops sending
READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})  # RFC 9110 §9.2.1: the safe methods
COUNTERS_GLOB = "counters-*.json"
# What the transport saw happen to the run's exchanges that is the deployment's doing rather than an
# answer to judge: each is counted and its first example kept, and every output shows them.
EVENTS = {
    "connection_resets": "connections reset or closed before their answer",
    "unknown_writes": "writes whose answer was lost: each may or may not have been applied, and none was sent again"
    " (RFC 9110 §9.2.2)",
    "stalled_answers": "answers that stalled past half the request timeout (--contract-request-timeout)",
    "busy_resends": "requests refused or dropped unanswered by a busy target, sent again after a pause with fewer"
    " requests in flight",
    "bodies_cut": "answers still arriving at the time limit (3 x --contract-request-timeout), cut off",
    "writes_found": "writes whose answer was lost, found applied: their animal listed under their unique name",
}
EVENT_EXAMPLES = "event_examples"  # beside the counters: the first example line of each event
# A run's counters (RunGuard); "created": POSTs answered 201 (or another 2xx showing the Pet it made), the
# animals a run added to a store that has no delete; "held_back": generated creates not sent on a crowded store
# (``GeneratedCases.limit_creates``); then the transport's events.
# "layer_requests", "layer_kinds", "layer_bytes": the HTTP layer's requests (tests/test_http_layer.py, sent once
# a run, in one process), their kinds and the bytes of their large bodies, for the reports' coverage line.
COUNTS = (
    "requests",
    "writes",
    "no_answer",
    "throttled",
    "repeats_not_sent",
    "created",
    "held_back",
    *EVENTS,
    "layer_requests",
    "layer_kinds",
    "layer_bytes",
)
SERVER_ERRORS = "server_errors"  # beside the counters: the 5xx answers a process kept as evidence
# Beside the counters too: the lowest bound on requests in flight a process came down to (``pacing``);
# the run's is the lowest of its processes', not their sum.
CONCURRENCY_MIN = "concurrency_min"
SERVER_ERRORS_KEPT = 20


def longest_wait(timeout: Any, default: float) -> float:
    """The longest single wait a requests ``timeout`` argument allows (for messages and the body deadline)."""
    if timeout is None:
        return default
    if isinstance(timeout, int | float):
        return float(timeout)
    if isinstance(timeout, tuple):
        values = [float(v) for v in timeout if v is not None]
        return max(values) if values else default
    if isinstance(timeout, urllib3.Timeout):
        values = [v for v in (timeout.connect_timeout, timeout.read_timeout) if isinstance(v, int | float)]
        return float(max(values)) if values else default
    return default


def cut_timeout(timeout: Any, wanted: float, cut: float) -> Any:
    """The caller's timeout with no part longer than ``cut`` (what is left of the budget)."""
    if cut >= wanted and timeout is not None:
        return timeout
    if isinstance(timeout, tuple):
        return tuple(cut if v is None else min(float(v), cut) for v in timeout)
    return cut


# -- the run's guard -------------------------------------------------------------------------------


class RunGuard:
    """The run budget, the circuit breaker and the counters of one process; thread-safe.

    The deadline is an epoch time (the pytest controller computes it and hands it to xdist workers).
    When ``shared_dir`` is set, opening the breaker writes ``shared_dir/breaker-open`` (its one-line
    reason) and ``check()`` in every process of the run sees it.  Once open, the breaker stays open
    for the run.  Counters are per process: each writes them with ``write_counters`` (name the file
    ``counters-<worker>.json`` in ``shared_dir``) and the controller sums them with ``merge_counters``.
    """

    def __init__(
        self,
        *,
        deadline: float | None = None,
        budget: float | None = None,
        circuit_breaker: int = 3,
        shared_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        self.deadline = deadline
        self.budget = budget
        self.circuit_breaker = circuit_breaker
        self.shared_dir = Path(shared_dir) if shared_dir is not None else None
        self._lock = threading.Lock()
        self._streak = 0
        self._open: str | None = None
        self._stopped: str | None = None
        self._first = ""
        self._counts = dict.fromkeys(COUNTS, 0)
        self._waited = 0.0
        self._concurrency_min: int | None = None
        self._server_errors: dict[tuple[str, str, int | None], record.Exchange] = {}
        self._examples: dict[str, str] = {}
        # Other tallies of this process, written beside its counters (e.g. "coverage"): plain data
        # that ``merge_counters`` leaves alone (it sums numbers only) and their own readers merge.
        self.tallies: dict[str, Callable[[], JsonLike]] = {}

    @classmethod
    def from_options(cls, options: TransportOptions) -> RunGuard:
        return cls(
            deadline=options.deadline,
            budget=options.budget,
            circuit_breaker=options.circuit_breaker,
            shared_dir=options.shared_dir,
        )

    # budget

    def seconds_left(self) -> float | None:
        """What is left of the budget (may be negative); None without a budget."""
        return None if self.deadline is None else self.deadline - time.time()

    def budget_spent(self) -> str | None:
        left = self.seconds_left()
        if left is None or left > 0:
            return None
        if self.budget is None:
            return "run budget spent (--contract-run-budget)"
        return f"run budget of {self.budget:g} s spent (--contract-run-budget)"

    def timeout(self, wanted: float) -> float:
        """The request timeout, cut to what is left of the budget (at least 50 ms)."""
        left = self.seconds_left()
        return wanted if left is None else max(0.05, min(wanted, left))

    # breaker

    @property
    def breaker_path(self) -> Path | None:
        return self.shared_dir / BREAKER_FILE if self.shared_dir is not None else None

    def breaker_open(self) -> str | None:
        """The breaker's one-line reason if it is open here or in another process of the run."""
        if self._open is not None:
            return self._open
        path = self.breaker_path
        if path is None or not path.exists():
            return None
        try:
            text = path.read_text(encoding="utf-8").strip().splitlines()
        except OSError:
            text = []
        with self._lock:
            if self._open is None:
                self._open = text[0] if text else "target unusable (breaker opened by another process of the run)"
                self._first = self._first or self._open
        return self._open

    # stop

    def stop(self, reason: str) -> None:
        """No request is sent from now on, in this process and (through ``shared_dir/stopped``) in
        every other process of the run: a run that was told to stop judges what it has, at once."""
        self._stopped = reason
        path = self.shared_dir / STOPPED_FILE if self.shared_dir is not None else None
        if path is not None and not path.exists():
            with contextlib.suppress(OSError):
                path.write_text(reason + "\n", encoding="utf-8")

    def stopped(self) -> str | None:
        """Why the run was stopped (here or in another of its processes); None while it runs."""
        if self._stopped is None and self.shared_dir is not None and (self.shared_dir / STOPPED_FILE).exists():
            try:
                self._stopped = (self.shared_dir / STOPPED_FILE).read_text(encoding="utf-8").strip() or "stopped"
            except OSError:
                self._stopped = "stopped"
        return self._stopped

    def check(self) -> None:
        """Raise TargetProblem instead of sending when the run was stopped, the budget is spent or the
        breaker is open."""
        stopped = self.stopped()
        if stopped:
            raise TargetProblem(f"{stopped}; request not sent", kind=BUDGET)
        spent = self.budget_spent()
        if spent:
            line = f"{spent}; request not sent"
            self.noted(line)
            raise TargetProblem(line, kind=BUDGET)
        problem = self.breaker_open()
        if problem:
            raise TargetProblem(problem, kind=TARGET)

    def failed(self, cause: str) -> None:
        """Count a request that got no answer; ``circuit_breaker`` of them in a row open the breaker.

        A request cut short because the budget ran out (or the run was stopped) says nothing about the
        target: it is counted as unanswered but does not feed the breaker.
        """
        with self._lock:
            self._counts["no_answer"] += 1
            self._first = self._first or cause
            if self.budget_spent() or self._open is not None or self._stopped is not None:
                return
            self._streak += 1
            if not self.circuit_breaker or self._streak < self.circuit_breaker:
                return
            self._open = (
                f"target unusable: {self._streak} requests in a row got no answer (last: {cause}); "
                "no more requests are sent"
            )
            opened = self._open
        self._publish(opened)

    def answered(self) -> None:
        with self._lock:
            self._streak = 0

    def noted(self, problem: str) -> None:
        """Remember a one-line problem that is not a missing answer (the first one is the run's)."""
        with self._lock:
            self._first = self._first or problem

    @property
    def first_problem(self) -> str:
        """The first one-line problem of the run in this process ("" if none), for the verdict line."""
        return self._first

    def _publish(self, line: str) -> None:
        path = self.breaker_path
        if path is None or path.exists():
            return
        with contextlib.suppress(OSError):  # the breaker is open in this process whatever the file system says
            publish(path, line + "\n")

    # counters

    def count_sent(self, method: str) -> None:
        with self._lock:
            self._counts["requests"] += 1
            if method.upper() not in READ_METHODS:
                self._counts["writes"] += 1

    def count_repeat(self) -> None:
        """A generated case that would have asked again what its test already asked: not sent."""
        with self._lock:
            self._counts["repeats_not_sent"] += 1

    def note_event(self, event: str, example: str) -> None:
        """One of ``EVENTS`` happened; the first ``example`` line of each is kept for the reports."""
        with self._lock:
            self._counts[event] += 1
            self._examples.setdefault(event, example)

    def count_held_back(self) -> None:
        """A generated create not sent: the run's allowance of new animals on a crowded store is spent."""
        with self._lock:
            self._counts["held_back"] += 1

    def note_layer(self, requests: int, kinds: int, large_bytes: int) -> None:
        """The HTTP layer's requests sent by this process (once a run), their kinds and their large bodies' bytes."""
        with self._lock:
            self._counts["layer_requests"] += requests
            self._counts["layer_kinds"] += kinds
            self._counts["layer_bytes"] += large_bytes

    def count_created(self) -> None:
        with self._lock:
            self._counts["created"] += 1

    def count_throttled(self, waited: float) -> None:
        with self._lock:
            self._counts["throttled"] += 1
            self._waited += waited

    def note_concurrency(self, limit: int) -> None:
        """The process's bound on requests in flight (the configured one, then each throttled lower one)."""
        with self._lock:
            if self._concurrency_min is None or limit < self._concurrency_min:
                self._concurrency_min = limit

    def note_server_error(self, exchange: record.Exchange) -> None:
        """A 5xx answer, kept (once per request line and status, at most ``SERVER_ERRORS_KEPT``) as evidence."""
        with self._lock:
            key = (exchange.method, exchange.url, exchange.status)
            if key not in self._server_errors and len(self._server_errors) < SERVER_ERRORS_KEPT:
                self._server_errors[key] = exchange

    def server_errors(self) -> list[record.Exchange]:
        with self._lock:
            return list(self._server_errors.values())

    def counters(self) -> JsonObject:
        """``requests`` sent, ``writes`` (not a safe method: GET, HEAD, OPTIONS, TRACE),
        ``no_answer``, ``throttled``, ``throttle_wait_s``,
        ``repeats_not_sent`` (generated cases identical to one their test sent), and ``concurrency_min``
        (the lowest bound on requests in flight, once the transport has noted one)."""
        with self._lock:
            lowest: JsonObject = {} if self._concurrency_min is None else {CONCURRENCY_MIN: self._concurrency_min}
            examples: JsonObject = {EVENT_EXAMPLES: {**self._examples}} if self._examples else {}
            return {**self._counts, "throttle_wait_s": round(self._waited, 3), **lowest, **examples}

    def write_counters(self, path: str | os.PathLike[str]) -> None:
        """This process's counters as JSON (e.g. ``shared_dir/counters-gw0.json``) for ``merge_counters``."""
        data = {
            **self.counters(),
            SERVER_ERRORS: [exchange.to_dict() for exchange in self.server_errors()],
            **{name: tally() for name, tally in self.tallies.items()},
        }
        publish(Path(path), json.dumps(data, sort_keys=True))


def merge_counters(directory: str | os.PathLike[str]) -> JsonObject:
    """The sum of every ``counters-*.json`` in ``directory`` (the run's counters, all processes), the
    lowest ``concurrency_min`` of them, and under ``server_errors`` the 5xx answers each process kept
    (as exchange dicts)."""
    sums: dict[str, int | float] = {**dict.fromkeys(COUNTS, 0), "throttle_wait_s": 0.0}
    server_errors: list[JsonValue] = []
    examples: JsonObject = {}
    lowest: int | None = None
    for path in sorted(Path(directory).glob(COUNTERS_GLOB)):
        data = wire.fields(json.loads(path.read_text(encoding="utf-8")), path.name)
        server_errors += [wire.copy(item) for item in wire.items(data, SERVER_ERRORS)]
        for event, line in wire.table(data, EVENT_EXAMPLES).items():
            examples.setdefault(event, str(line))
        low = data.get(CONCURRENCY_MIN)
        if isinstance(low, int):
            lowest = low if lowest is None else min(lowest, low)
        for name, value in data.items():
            if isinstance(value, int | float) and not isinstance(value, bool) and name != CONCURRENCY_MIN:
                sums[name] = sums.get(name, 0) + value
    sums["throttle_wait_s"] = round(float(sums["throttle_wait_s"]), 3)
    total: JsonObject = {**sums, SERVER_ERRORS: server_errors}
    if lowest is not None:
        total[CONCURRENCY_MIN] = lowest
    if examples:
        total[EVENT_EXAMPLES] = examples
    return total


def event_lines(counters: Mapping[str, JsonLike]) -> list[str]:
    """One line per transport event the run saw, with its count and first example, for every output."""
    examples = counters.get(EVENT_EXAMPLES)
    lines = []
    for event, words in EVENTS.items():
        count = counters.get(event)
        if isinstance(count, int) and count:
            example = examples.get(event, "") if isinstance(examples, Mapping) else ""
            lines.append(f"the transport saw {count} {words}" + (f"; the first: {example}" if example else ""))
    return lines
