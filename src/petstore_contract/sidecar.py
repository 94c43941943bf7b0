"""A job that runs in a child process beside the rest of the run: the stateful sequences.

The sequences are a chain (each step sends what the last answer said), so they cannot go faster
than one round trip a step, and Hypothesis cannot run in a second thread here (CPython 3.11:
"AST constructor recursion depth mismatch").  In a child process the chain overlaps the rest of
the run, whatever the distance to the target, and drawing its steps uses the second core.

Files in the run's shared directory are the whole protocol:

- the parent starts ``python -m petstore_contract.sidecar JOB`` with the run's settings in
  ``PETSTORE_SIDECAR_SETTINGS``; the key stays in its own variable, as for xdist workers;
- the child builds its ``Run`` and waits for ``go-JOB``, which the parent writes once set-up is
  done (nothing is written to the target before the suite has probed its unknown ids and read
  the store);
- the child runs the job and writes ``outcome-JOB.json`` (what the job raised, as data) and its
  request counters, which the controller adds to the run's;
- the parent's test raises what the job raised, so the record is the one an inline run makes;
- the child exits when its stdin closes: it never outlives the run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from petstore_contract.record import Exchange, Finding, Mismatch, Note, Undecided, Violation, find_error
from petstore_contract.transport import TargetProblem

SETTINGS_ENV = "PETSTORE_SIDECAR_SETTINGS"
POLL = 0.01


def _stateful() -> Callable[[], None]:
    from petstore_contract.stateful import run_sequences

    return run_sequences


JOBS: dict[str, Callable[[], Callable[[], None]]] = {"stateful": _stateful}


# -- an outcome as data ------------------------------------------------------------------------------


def encode(error: BaseException | None) -> dict[str, Any]:
    """What a job raised, as JSON data; the order of the cases is ``outcome.record_of``'s."""
    if error is None:
        return {"passed": True}
    if (undecided := find_error(error, Undecided)) is not None:
        return {"undecided": undecided.note.to_dict()}
    if (problem := find_error(error, TargetProblem)) is not None:
        exchange = problem.exchange.to_dict() if problem.exchange is not None else None
        return {"target_problem": problem.message, "kind": problem.kind, "exchange": exchange}
    if (violation := find_error(error, Violation)) is not None:
        return {"findings": [f.to_dict() for f in violation.findings]}
    if (mismatch := find_error(error, Mismatch)) is not None:
        exchange = mismatch.exchange.to_dict() if mismatch.exchange is not None else None
        return {"mismatch": [mismatch.expected, mismatch.observed], "exchange": exchange}
    first_line = (str(error).strip().splitlines() or [""])[0][:300]
    return {"error": f"{type(error).__name__}: {first_line}"}


def decode(data: dict[str, Any]) -> BaseException | None:
    exchange = Exchange.from_dict(data["exchange"]) if data.get("exchange") else None
    if "undecided" in data:
        return Undecided(Note.from_dict(data["undecided"]))
    if "target_problem" in data:
        return TargetProblem(data["target_problem"], kind=data["kind"], exchange=exchange)
    if "findings" in data:
        return Violation(*(Finding.from_dict(f) for f in data["findings"]))
    if "mismatch" in data:
        expected, observed = data["mismatch"]
        return Mismatch(expected, observed, exchange)
    if "error" in data:
        return RuntimeError(data["error"])
    return None


def _publish(path: Path, data: dict[str, Any]) -> None:
    partial = path.with_suffix(".part")
    partial.write_text(json.dumps(data), encoding="utf-8")
    partial.replace(path)


# -- the parent's side -------------------------------------------------------------------------------


class Sidecar:
    """One job in a child process; ``go`` releases it, ``raise_outcome`` waits and raises what it raised."""

    def __init__(self, job: str, settings: dict[str, Any], shared_dir: str, redact: Callable[[str], str]) -> None:
        if job not in JOBS:
            raise ValueError(f"no sidecar job {job!r}")
        self.job = job
        self.shared = Path(shared_dir)
        self.redact = redact
        self.log_path = self.shared / f"sidecar-{job}.log"
        env = {**os.environ, SETTINGS_ENV: json.dumps(settings)}
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "petstore_contract.sidecar", job],
                stdin=subprocess.PIPE,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
            )

    @property
    def go_path(self) -> Path:
        return self.shared / f"go-{self.job}"

    @property
    def outcome_path(self) -> Path:
        return self.shared / f"outcome-{self.job}.json"

    def go(self) -> None:
        self.go_path.touch()

    def raise_outcome(self) -> None:
        """Wait for the job (releasing it if set-up did not) and raise what it raised, if anything."""
        self.go()
        while not self.outcome_path.exists():
            if self.process.poll() is not None and not self.outcome_path.exists():
                raise RuntimeError(self._died())
            time.sleep(POLL)
        error = decode(json.loads(self.outcome_path.read_text(encoding="utf-8")))
        if error is not None:
            raise error

    def _died(self) -> str:
        lines = self.log_path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
        last = self.redact(lines[-1][:300]) if lines else "no output"
        return f"the {self.job} process exited with code {self.process.returncode} before it finished: {last}"

    def stop(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()  # the child exits on its own when its stdin closes
        if self.process.poll() is None:
            self.process.terminate()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


# -- the child's side --------------------------------------------------------------------------------


def _exit_with_parent(fd: int) -> None:
    # os.read on the descriptor, not sys.stdin: a thread blocked in a buffered reader aborts the
    # interpreter at exit ("could not acquire lock for <stdin>").
    while os.read(fd, 1024):
        pass
    os._exit(3)  # end of file: the parent closed the pipe or died


def _released(go: Path) -> None:
    while not go.exists():
        time.sleep(POLL)


def main(argv: list[str]) -> int:
    from petstore_contract.run import Run, RunSettings, install

    if len(argv) != 1 or argv[0] not in JOBS or SETTINGS_ENV not in os.environ:
        print(f"usage: {SETTINGS_ENV}=... python -m petstore_contract.sidecar {{{','.join(JOBS)}}}", file=sys.stderr)
        return 2
    job = argv[0]
    threading.Thread(target=_exit_with_parent, args=(sys.stdin.fileno(),), daemon=True).start()
    try:
        settings = RunSettings(**json.loads(os.environ[SETTINGS_ENV]))
    except (ValueError, TypeError) as exc:
        print(f"unusable {SETTINGS_ENV}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    run = Run(settings, os.environ.get(settings.key_env, ""))
    install(run)
    work = JOBS[job]()
    shared = Path(settings.shared_dir)
    _released(shared / f"go-{job}")
    error: BaseException | None = None
    try:
        work()
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # Undecided is a pytest skip, not an Exception
        error = exc
    finally:
        run.guard.write_counters(shared / f"counters-sidecar-{job}.json")
    _publish(shared / f"outcome-{job}.json", encode(error))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
