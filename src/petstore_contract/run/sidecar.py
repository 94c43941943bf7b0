"""Test modules that a concurrent run runs in child processes of their own: the Hypothesis-driven ones.

Why: the stateful sequences are a chain (each step sends what the last answer said) and the
generated tests spend their time drawing cases, which is Python work.  In one process both wait
on each other and on the targeted tests; Hypothesis cannot run in a second thread here (CPython
3.11: "AST constructor recursion depth mismatch").  In child processes they overlap the rest of
the run, whatever the distance to the target, and use the other cores.

How, with files in the run's shared directory and no other channel:

- at session start the parent starts ``python -m pytest <module>`` (as many as ``MODULES`` says)
  with the run's settings in ``PETSTORE_SIDECAR_SETTINGS`` (the key stays in its own variable, as
  for xdist workers); the child collects its module while the parent collects the suite;
- once the parent has collected, it deals the module's selected tests (``-k``, ``-m``, read-only)
  out among the module's children and writes each its share; a child runs exactly those, or is
  stopped when it got none;
- the child's set-up waits for the parent's (``Run.once``): it writes nothing before set-up is done;
- after each test the child writes its request counters and then what the test raised, as data
  (``encode``); the parent's test of the same name raises it again (``decode``), so the parent's
  record is the one an inline run makes.  Only tests that report through what they raise belong
  in a child (no ``judge`` fixture);
- the child exits when its stdin closes: it never outlives the run.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from petstore_contract.core.records import BUDGET, Exchange, Finding, Mismatch, Note, Undecided, Violation, find_error
from petstore_contract.judging.expect import JUDGE_KEY
from petstore_contract.transport import RunGuard, TargetProblem

SETTINGS_ENV = "PETSTORE_SIDECAR_SETTINGS"
NAME_ENV = "PETSTORE_SIDECAR_NAME"
# The suite's modules that run in child processes when the run is concurrent, and how many
# children each gets: the module's selected tests are dealt out among them (test_stateful.py has
# two independent walks, each a chain of round trips: a child per walk, whatever the distance to
# the target; see docs/performance.md, "Performance devices").
MODULES = {"test_stateful.py": 2}
POLL = 0.01
GRACE = 30.0  # seconds past the run budget for a child's last request to time out and report
SELECTED = "selected.json"


def children_for(count: int, cores: int) -> int:
    """How many child processes a module gets: its ``count``, none on a single core (a child only
    helps by running beside this process)."""
    return count if cores >= 2 else 0


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system tells it)."""
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity is not None else os.cpu_count() or 1


def module_of(item: pytest.Item) -> str:
    """The file name of a test's module (``MODULES`` names them so)."""
    return Path(str(item.path)).name


def key_of(item: pytest.Item) -> str:
    """A test's name within its module: the same in the parent and in the child (rootdirs differ)."""
    return item.nodeid.split("::", 1)[-1]


# -- what a test raised, as data ---------------------------------------------------------------------


def encode(error: BaseException | None, examined: dict[str, int] | None = None) -> dict[str, Any]:
    """What a test raised, and the judgements it made by clause, as JSON data."""
    return {**_encode_error(error), "examined": dict(examined or {})}


def _encode_error(error: BaseException | None) -> dict[str, Any]:
    """What a test raised, as JSON data; the order of the cases is ``outcome.record_of``'s."""
    if error is None:
        return {"passed": True}
    if (undecided := find_error(error, Undecided)) is not None:
        return {"undecided": undecided.note.to_dict()}
    if (problem := find_error(error, TargetProblem)) is not None:
        exchange = problem.exchange.to_dict() if problem.exchange is not None else None
        return {"target_problem": problem.message, "kind": problem.kind, "exchange": exchange}
    if isinstance(error, pytest.skip.Exception):
        return {"skipped": str(error)}
    if (violation := find_error(error, Violation)) is not None:
        return {"findings": [f.to_dict() for f in violation.findings]}
    if (mismatch := find_error(error, Mismatch)) is not None:
        exchange = mismatch.exchange.to_dict() if mismatch.exchange is not None else None
        return {"mismatch": [mismatch.expected, mismatch.observed, mismatch.expectation], "exchange": exchange}
    first_line = (str(error).strip().splitlines() or [""])[0][:300]
    return {"error": f"{type(error).__name__}: {first_line}"}


def decode(data: dict[str, Any]) -> BaseException | None:
    exchange = Exchange.from_dict(data["exchange"]) if data.get("exchange") else None
    if "undecided" in data:
        return Undecided(Note.from_dict(data["undecided"]))
    if "target_problem" in data:
        return TargetProblem(data["target_problem"], kind=data["kind"], exchange=exchange)
    if "skipped" in data:
        return pytest.skip.Exception(data["skipped"])
    if "findings" in data:
        return Violation(*(Finding.from_dict(f) for f in data["findings"]))
    if "mismatch" in data:
        expected, observed, expectation = data["mismatch"]
        return Mismatch(expected, observed, exchange, expectation)
    if "error" in data:
        return RuntimeError(data["error"])
    return None


def _publish(path: Path, data: Any) -> None:
    partial = path.with_name(path.name + ".part")
    partial.write_text(json.dumps(data), encoding="utf-8")
    partial.replace(path)


def _outcome_path(directory: Path, key: str) -> Path:
    return directory / f"{hashlib.sha256(key.encode()).hexdigest()[:24]}.json"


# -- the parent's side -------------------------------------------------------------------------------


class Sidecar:
    """One test module in a child process; ``raise_outcome(key)`` waits for a test and raises what it raised."""

    def __init__(
        self, module: Path, settings: dict[str, Any], redact: Callable[[str], str], api_key: str, number: int = 1
    ) -> None:
        self.module = module
        self.deadline: float | None = settings.get("deadline")  # the run budget's end; the child obeys it too
        self.name = f"sidecar-{module.stem}-{number}"
        self.directory = Path(settings["shared_dir"]) / self.name
        self.directory.mkdir(parents=True, exist_ok=True)
        self.redact = redact
        self.log_path = self.directory / "output.log"
        # The child takes none of the user's pytest options (an ini file's or PYTEST_ADDOPTS' --html,
        # --junitxml or -n would write or fork there too): the run's settings are all it needs.
        env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
        # The key in the child's own environment only (the embedded reference's is in no variable here).
        env |= {SETTINGS_ENV: json.dumps(settings), NAME_ENV: self.name, settings["key_env"]: api_key}
        # --capture=sys: pytest's default fd capture would put /dev/null on the child's stdin.
        command = [sys.executable, "-m", "pytest", str(module), "-c", os.devnull, "--rootdir", str(module.parent)]
        command += ["-q", "-p", "no:cacheprovider", "--assert=plain", "--capture=sys"]
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                command, stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT, env=env
            )

    def select(self, keys: list[str]) -> None:
        _publish(self.directory / SELECTED, keys)

    def raise_outcome(self, key: str) -> None:
        """Wait for the child to finish the test named ``key``; raise what it raised, if anything."""
        error, _ = self.outcome(key)
        if error is not None:
            raise error

    def outcome(self, key: str) -> tuple[BaseException | None, dict[str, int]]:
        """Wait for the child to finish the test named ``key``: what it raised, and its judgements by clause."""
        path = _outcome_path(self.directory, key)
        while not path.exists():
            if self.process.poll() is not None and not path.exists():
                raise RuntimeError(self._died())
            if self.deadline is not None and time.time() > self.deadline + GRACE:
                raise TargetProblem(
                    f"the run budget was spent before the child process running {self.module.name} finished {key}",
                    kind=BUDGET,
                )
            time.sleep(POLL)
        data = json.loads(path.read_text(encoding="utf-8"))
        return decode(data), {str(k): int(v) for k, v in data.get("examined", {}).items()}

    def _died(self) -> str:
        lines = self.log_path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
        last = self.redact(lines[-1][:300]) if lines else "no output"
        code = self.process.returncode
        return f"the child process running {self.module.name} exited with code {code} before it finished: {last}"

    def stop(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()  # the child exits on its own when its stdin closes
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class ChildProcesses:
    """The parent's side: the modules of ``MODULES`` in child processes, each test placed in one."""

    def __init__(self) -> None:
        self.sidecars: dict[str, list[Sidecar]] = {}  # module name -> its child processes
        self.placed: dict[str, Sidecar] = {}  # a selected test's node id -> the child that runs it

    def start(self, suite: Path, settings: dict[str, Any], redact: Callable[[str], str], api_key: str) -> None:
        """Each module's children, started now so that they collect while the parent does: the
        module's number, none on a single core (``children_for``)."""
        for name, wanted in MODULES.items():
            module = suite / name
            count = children_for(wanted, usable_cores())
            if module.is_file() and count:
                self.sidecars[name] = [Sidecar(module, settings, redact, api_key, n + 1) for n in range(count)]

    def describe(self) -> str:
        """Where the child processes run what, e.g. "test_stateful.py in 2 child processes"."""
        counts = {name: len(children) for name, children in self.sidecars.items() if children}
        return ", ".join(f"{name} in {n} child process{'es' if n > 1 else ''}" for name, n in counts.items())

    def runs(self, item: pytest.Item) -> bool:
        return module_of(item) in self.sidecars

    def deal(self, items: list[pytest.Item]) -> None:
        """Deal each module's selected tests out among its children; stop the children with none."""
        for name, children in self.sidecars.items():
            selected = [item for item in items if module_of(item) == name]
            for number, child in enumerate(children):
                share = selected[number :: len(children)]
                self.placed |= {item.nodeid: child for item in share}
                if share:
                    child.select([key_of(item) for item in share])
                else:
                    child.stop()
            children[:] = [child for child in children if child in self.placed.values()]

    def outcome(self, item: pytest.Item) -> tuple[BaseException | None, dict[str, int]] | None:
        """What the test raised in its child, and its judgements by clause; None: it runs here."""
        sidecar = self.placed.get(item.nodeid)
        return sidecar.outcome(key_of(item)) if sidecar is not None else None

    def stop(self) -> None:
        for children in self.sidecars.values():
            for sidecar in children:
                sidecar.stop()
        self.sidecars.clear()
        self.placed.clear()


# -- the child's side --------------------------------------------------------------------------------


def child_settings() -> dict[str, Any] | None:
    """The run's settings when this process is a child of a concurrent run, else None."""
    text = os.environ.get(SETTINGS_ENV)
    if text is None:
        return None
    try:
        settings: dict[str, Any] = json.loads(text)
    except ValueError as exc:
        raise pytest.UsageError(f"unusable {SETTINGS_ENV}: {exc}") from None
    return settings


class ChildSide:
    """What a child process does for its parent (called by the session object): runs exactly the tests
    the parent selected, and reports each test's outcome as data."""

    def __init__(self, guard: RunGuard, shared_dir: str) -> None:
        self.guard = guard
        self.name = os.environ.get(NAME_ENV, "sidecar")
        self.directory = Path(shared_dir) / self.name
        # Descriptor 0 itself: pytest replaces sys.stdin while it captures (--capture=sys leaves fd 0).
        threading.Thread(target=_exit_with_parent, args=(0,), daemon=True).start()

    def select(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        selected = set(_wait_for_json(self.directory / SELECTED))
        config.hook.pytest_deselected(items=[i for i in items if key_of(i) not in selected])
        items[:] = [i for i in items if key_of(i) in selected]

    def publish(self, item: pytest.Item, call: pytest.CallInfo[None], report: pytest.TestReport) -> None:
        if call.when == "call" or (call.when == "setup" and not report.passed):
            # Counters first: once the parent sees the last outcome, the run's counters are whole.
            self.guard.write_counters(self.directory.parent / f"counters-{self.name}.json")
            error = call.excinfo.value if call.excinfo is not None else None
            judge = item.stash.get(JUDGE_KEY, None)
            _publish(_outcome_path(self.directory, key_of(item)), encode(error, judge.examined if judge else None))


def _wait_for_json(path: Path) -> Any:
    while not path.exists():
        time.sleep(POLL)
    return json.loads(path.read_text(encoding="utf-8"))


def _exit_with_parent(fd: int) -> None:
    # os.read on the descriptor, not sys.stdin: a thread blocked in a buffered reader aborts the
    # interpreter at exit ("could not acquire lock for <stdin>").
    while os.read(fd, 1024):
        pass
    os._exit(3)  # end of file: the parent closed the pipe or died
