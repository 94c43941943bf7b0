"""Where one contract run's CPU goes, by phase: start-up, collection, the generated tests, the targeted
tests, the verdict and reports, and the embedded reference.

    python -m benchmarks.phases                       # the default run on the embedded reference
    python -m benchmarks.phases -- --contract-seed 1  # anything after -- goes to pytest

The run is ``python -m pytest -p benchmarks.phases ...`` in a process of its own; this module, loaded
as a plugin, reads the process's CPU time (user+sys, ``resource.getrusage``) at each phase's end, so the
phases add up to the process's CPU.  A test's CPU is the process's while the test runs (the run's
threads, sending and judging beside it, included).  The embedded reference is a child process: its CPU
is the children's, read once the run has ended.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Generator, Sequence
from pathlib import Path

import pytest

OUT_ENV = "PETSTORE_PHASES_OUT"
ROOT = Path(__file__).resolve().parents[1]


def _cpu() -> float:
    mine = resource.getrusage(resource.RUSAGE_SELF)
    return mine.ru_utime + mine.ru_stime


# -- the plugin, in the measured run ----------------------------------------------------------------

_MARKS: dict[str, float] = {"imported": _cpu()}  # the interpreter and pytest (``-p`` loads this first)
_TESTS = {"generated": 0.0, "targeted": 0.0}


def pytest_sessionstart(session: pytest.Session) -> None:
    _MARKS["configured"] = _cpu()  # the contract run's start: its modules, settings, the embedded reference


def pytest_collection_finish(session: pytest.Session) -> None:
    _MARKS["collected"] = _cpu()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, object, object]:
    started = _cpu()
    try:
        return (yield)
    finally:
        kind = "generated" if item.get_closest_marker("generated") else "targeted"
        _TESTS[kind] += _cpu() - started


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    out = os.environ.get(OUT_ENV)
    if out:
        Path(out).write_text(json.dumps({**_MARKS, "end": _cpu(), "tests": _TESTS}), encoding="utf-8")


# -- the command line -----------------------------------------------------------------------------


def phases(marks: dict[str, float], tests: dict[str, float]) -> list[tuple[str, float]]:
    """The phases' CPU seconds, in order, from the plugin's readings."""
    after = marks["end"] - marks["collected"]  # the tests, then what the run does once they are done
    return [
        ("start-up: the interpreter and pytest", marks["imported"]),
        (
            "pytest's plugins and the contract run's start (its modules; the embedded reference's, given no URL)",
            marks["configured"] - marks["imported"],
        ),
        (
            "collection (the suite's modules, Schemathesis' tests and coverage cases)",
            marks["collected"] - marks["configured"],
        ),
        ("the generated tests (drawing, sending, judging)", tests["generated"]),
        ("the targeted tests", tests["targeted"]),
        ("the verdict, the reports (and pytest between the tests)", after - tests["generated"] - tests["targeted"]),
    ]


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    args = args[1:] if args[:1] == ["--"] else args
    with tempfile.TemporaryDirectory(prefix="petstore-phases-") as folder:
        out = Path(folder) / "phases.json"
        env = {**os.environ, OUT_ENV: str(out), "PYTHONPATH": str(ROOT)}
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "benchmarks.phases", *args],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            text=True,
            timeout=1800,
            check=False,
        )
        wall = time.monotonic() - started
        if not out.is_file():
            print(
                f"the run ended (exit {done.returncode}) without its readings:\n{done.stdout[-2000:]}", file=sys.stderr
            )
            return 1
        readings = json.loads(out.read_text(encoding="utf-8"))
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    rows = phases(readings, readings["tests"])
    total = readings["end"]
    print(f"{done.stdout.strip().splitlines()[-1]} (exit {done.returncode}); wall {wall:.2f} s\n")
    print("| phase | CPU s | share |\n|---|---|---|")
    for name, seconds in rows:
        print(f"| {name} | {seconds:.2f} | {seconds / total:.0%} |")
    reference = children.ru_utime + children.ru_stime - total
    print(f"| **the run's process** | **{total:.2f}** | |")
    print(f"| its children (the embedded reference; xdist workers with -n) | {reference:.2f} | |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
