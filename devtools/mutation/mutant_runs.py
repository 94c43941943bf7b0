"""One mutant at a time per copy of the tree: write it, run the contract suite as a user would, put it back.

Each worker has its own copy of the checkout under a temporary folder (``src``, ``tests``, ``spec``,
``pyproject.toml``); the suite it starts imports ``petstore_contract`` from the copy (``PYTHONPATH``), so
the embedded reference it starts serves the copy's mutated file.  The checkout itself is never
written: a run killed with SIGKILL leaves a mutant in a temporary folder at worst, never in the tree.

The mutation is written and restored by cosmic-ray's public ``cosmic_ray.mutating.use_mutation`` (the
original bytes go back in a ``finally``); the operators come from ``cosmic_ray.plugins.get_operator``.
The suite runs here rather than through cosmic-ray's test runner, which keeps only "exit 0 or not":
this tool tells "not conformant" (exit 1, killed) from "inconclusive" (exit 6) and a timeout.

What each exit of the suite counts as:

- 1, not conformant: **killed**, with the violated clauses;
- 0, conformant: **survived**;
- 6, inconclusive (the mutant made the reference reject every key, crash at start-up, stop answering):
  **inconclusive**, counted on its own line.  The gate holds (exit 6 is never a pass), but no clause
  was shown broken, so it is not a kill and the score does not count it as one;
- no verdict within the timeout: **timeout**, counted with the inconclusive ones, not a kill;
- 2-5 (pytest's own: interrupted, internal error, usage, no tests): **error**, listed, and the run
  fails: the suite itself broke on a mutant, which is a fault of the suite to look at.

A mutant that does not compile is skipped ("does not compile"), never served.
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cosmic_ray.mutating import use_mutation
from cosmic_ray.plugins import get_operator
from cosmic_ray.work_item import TestOutcome, WorkerOutcome, WorkResult

from devtools.launcher import suite_command

KILLED, SURVIVED, INCONCLUSIVE, TIMEOUT, ERROR = "killed", "survived", "inconclusive", "timeout", "error"
NOT_COMPILED = "does not compile"  # a skip reason: such a mutant is never served
# The suite as a user runs it against the embedded reference: the quick profile, every test in the
# run's process (the workers already share the cores).
SUITE_ARGS = ("--contract-profile", "quick")
# Stopping at the first failed test saves a killed mutant the rest of its run.  A test also fails on
# a SHOULD clause (a warning, not a violation), and the suite judges only the tests that ran: a run
# stopped there would say "conformant" on the few clauses it reached.  So a run that stopped early
# without a violated MUST clause is run again whole (see Worker.run).
STOP_EARLY = ("-x",)
COPIED = ("src", "tests", "spec", "pyproject.toml", "conftest.py")


class GuardError(Exception):
    """A mutated file did not come back byte for byte (one line: which)."""


@dataclass(frozen=True)
class SuiteOutcome:
    label: str
    exit_code: int | None
    seconds: float
    detail: str  # the verdict's reason, the violated clauses, or why there is none
    tests: int = 0  # tests the suite judged (summary.json): fewer than a whole run's when it stopped early

    def line(self) -> str:
        code = "no exit" if self.exit_code is None else f"exit {self.exit_code}"
        return f"{self.label}: {code} in {self.seconds:.1f} s: {self.detail}"


def label_of(output: str | None) -> str:
    """The outcome label a result's output starts with (see ``SuiteOutcome.line``)."""
    head = (output or "").split(":", 1)[0]
    return head if head in (KILLED, SURVIVED, INCONCLUSIVE, TIMEOUT, ERROR) else ERROR


class Processes:
    """The suite runs in flight, so that an interrupt can stop them all (each in its own process group)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: set[subprocess.Popen[bytes]] = set()
        self.stopping = threading.Event()

    def add(self, process: subprocess.Popen[bytes]) -> None:
        with self._lock:
            self._running.add(process)
        if self.stopping.is_set():
            kill_group(process)

    def discard(self, process: subprocess.Popen[bytes]) -> None:
        with self._lock:
            self._running.discard(process)

    def stop_all(self) -> None:
        self.stopping.set()
        with self._lock:
            running = list(self._running)
        for process in running:
            kill_group(process)


def kill_group(process: subprocess.Popen[bytes]) -> None:
    # The suite and the reference it started share the suite's process group: both go.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


class Worker:
    """A copy of the tree under ``base`` that runs one mutant at a time."""

    def __init__(self, checkout: Path, base: Path, number: int, pristine: dict[str, bytes]) -> None:
        self.checkout = checkout
        self.root = base / f"worker-{number}"
        self.root.mkdir(parents=True)
        for name in COPIED:
            source = checkout / name
            if source.is_dir():
                shutil.copytree(source, self.root / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
            elif source.exists():
                shutil.copy2(source, self.root / name)
        self.pristine = pristine  # relative path -> git's bytes of each module that gets mutated
        for relative, data in pristine.items():
            (self.root / relative).write_bytes(data)

    def environment(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in ("PETSTORE_BASE_URL", "PETSTORE_API_KEY")}
        env["PYTHONPATH"] = os.pathsep.join(filter(None, (str(self.root / "src"), os.environ.get("PYTHONPATH"))))
        env["PYTHONDONTWRITEBYTECODE"] = "1"  # a .pyc of one mutant must never serve the next one
        return env

    def serves_copy(self) -> bool:
        """Whether a suite started here imports the copy's reference (and so serves its mutants)."""
        probe = "import petstore_contract.reference.app as m; print(m.__file__)"
        done = subprocess.run(
            [sys.executable, "-c", probe], env=self.environment(), cwd=self.root, capture_output=True, timeout=60
        )
        path = done.stdout.decode().strip()
        return done.returncode == 0 and Path(path).resolve().is_relative_to(self.root.resolve())

    def run_suite(self, timeout: float, processes: Processes, stop_early: bool = False) -> SuiteOutcome:
        with tempfile.TemporaryDirectory(prefix="report-", dir=self.root) as tmp:
            reports = Path(tmp)
            args = SUITE_ARGS + (STOP_EARLY if stop_early else ())
            command = suite_command(reports, None, args, suite=self.root / "tests")
            started = time.monotonic()
            with (reports / "output.txt").open("wb") as output:
                process = subprocess.Popen(
                    command,
                    cwd=self.root,
                    env=self.environment(),
                    stdin=subprocess.DEVNULL,
                    stdout=output,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,  # its own process group: a timeout or an interrupt stops it whole
                )
                processes.add(process)
                try:
                    code: int | None = process.wait(timeout=timeout)
                except subprocess.TimeoutExpired:
                    kill_group(process)
                    process.wait()
                    code = None
                finally:
                    processes.discard(process)
            seconds = time.monotonic() - started
            if code is None:
                return SuiteOutcome(TIMEOUT, None, seconds, f"no verdict within {timeout:.0f} s")
            return _outcome(code, seconds, reports)

    def run(self, item: Any, timeout: float, processes: Processes, whole: int) -> Any:
        """Apply the work item's mutation to the copy, run the suite, restore; a cosmic-ray WorkResult.

        ``whole``: how many tests a whole run judges (the baseline's count).
        """
        spec = item.mutations[0]
        relative = Path(spec.module_path).resolve().relative_to(self.checkout.resolve()).as_posix()
        path = self.root / relative
        operator = get_operator(spec.operator_name)(**(spec.operator_args or {}))
        try:
            with use_mutation(path, operator, spec.occurrence) as (original, mutated):
                if mutated is None:
                    return WorkResult(worker_outcome=WorkerOutcome.NO_TEST, output="no mutation at this occurrence")
                diff = unified_diff(original, mutated, relative)
                try:
                    compile(mutated, str(path), "exec")
                except SyntaxError as exc:
                    # cosmic-ray's binary operator replacement also rewrites the ** of {**mapping}:
                    # the server would not start, which says nothing about the suite.
                    reason = f"{NOT_COMPILED}: {exc.msg} (line {exc.lineno})"
                    return WorkResult(worker_outcome=WorkerOutcome.SKIPPED, output=reason, diff=diff)
                outcome = self.run_suite(timeout, processes, stop_early=True)
                if outcome.label in (SURVIVED, INCONCLUSIVE) and 0 < outcome.tests < whole:
                    first = outcome
                    outcome = self.run_suite(timeout, processes)
                    note = f"; run whole after -x stopped at {first.tests} of {whole} tests ({first.label})"
                    outcome = dataclasses.replace(outcome, detail=outcome.detail + note)
        finally:
            self.check(relative)
        test_outcome = {KILLED: TestOutcome.KILLED, SURVIVED: TestOutcome.SURVIVED}.get(
            outcome.label,
            TestOutcome.INCOMPETENT,  # cosmic-ray has no "inconclusive": see label_of
        )
        return WorkResult(
            worker_outcome=WorkerOutcome.NORMAL, output=outcome.line(), test_outcome=test_outcome, diff=diff
        )

    def check(self, relative: str) -> None:
        """The copy's file is git's again, byte for byte; if not, put git's bytes back and say so."""
        path = self.root / relative
        if path.read_bytes() != self.pristine[relative]:
            path.write_bytes(self.pristine[relative])
            raise GuardError(f"{path} did not come back unmutated; restored from git")

    def clean(self) -> list[str]:
        """Restore every module from git's bytes where it differs; the ones that did."""
        restored = []
        for relative, data in self.pristine.items():
            path = self.root / relative
            if path.exists() and path.read_bytes() != data:
                path.write_bytes(data)
                restored.append(str(path))
        return restored


def unified_diff(original: str, mutated: str, relative: str) -> str:
    lines = difflib.unified_diff(
        original.splitlines(), mutated.splitlines(), f"a/{relative}", f"b/{relative}", n=1, lineterm=""
    )
    return "\n".join(lines)


def _outcome(code: int, seconds: float, reports: Path) -> SuiteOutcome:
    summary: dict[str, Any] = {}
    with contextlib.suppress(OSError, ValueError):
        summary = json.loads((reports / "summary.json").read_text(encoding="utf-8"))
    reason = str(summary.get("reason") or "")
    tests = int(summary.get("tests", {}).get("tests", 0))
    if code == 1:
        violated = sorted(c["id"] for c in summary.get("clauses", ()) if c.get("outcome") == "violated")
        return SuiteOutcome(KILLED, code, seconds, ", ".join(violated) or reason or "not conformant", tests)
    if code == 0:
        return SuiteOutcome(SURVIVED, code, seconds, reason or "conformant", tests)
    if code == 6:
        return SuiteOutcome(INCONCLUSIVE, code, seconds, reason or "inconclusive", tests)
    tail = _tail(reports / "output.txt")
    return SuiteOutcome(ERROR, code, seconds, reason or tail or "no verdict", tests)


def _tail(path: Path) -> str:
    with contextlib.suppress(OSError):
        lines = path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
        return lines[-1][:300] if lines else ""
    return ""
