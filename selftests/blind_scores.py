"""The contract suite against the blind catalogs (``selftests/blind``, ``blind2``, ``blind3``, ``blind4``):
servers written from the interface document alone by people who had not read the suite, scored apart from the
suite's own catalog.  Each round is a folder with the same command line (``server.py --list``, ``--variant NAME``,
``--port``, ``--preload``); round 2 is written in other styles (Starlette over SQLite, behind a gateway, a
hand-written service listing newest first); round 3 is a compliance round: compliant servers on real web
frameworks (aiohttp, Falcon, Django, Flask, Litestar, Tornado, Bottle behind nginx) that keep their
framework's answers where the document is silent, and a few faulty copies; round 4 is written in other
languages (Go's net/http, PHP's built-in server, Ruby's Sinatra, Perl's Mojolicious), each with compliant
servers and the faults that hide in its defaults.

Each entry's server (``selftests/<round>/server.py --variant NAME``) is started on a loopback port
and judged by the suite as a user would (a subprocess, ``--base-url``, the key in the
environment).  A fault is *caught* when the run is not conformant with no error of the suite; a
compliant variant must end conformant, on an empty store and on a crowded one.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import subprocess
import sys
import threading
import tomllib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from devtools.killmatrix import suite_errors
from devtools.launcher import Runner, SuiteRun, run_suite, stop_process
from devtools.suitehost import suite_hosts

HERE = Path(__file__).resolve().parent
ROUNDS = ("blind", "blind2", "blind3", "blind4")  # the folders of the blind catalogs, in the order they were written
MISSES = HERE / "blind_misses.toml"
CROWDED = 150  # the blind catalog's crowded store (more than a page of 100)
SUITE_ARGS = ("--contract-profile", "quick")
START_SECONDS = 180  # a blind server's first line (its base URL), on a loaded machine
# Rounds whose servers run in a language runtime of the system's (Debian's packages): their harness answers
# ``--check --variant NAME``. Without the runtime a server is "unavailable": skipped, or failed when
# PETSTORE_REQUIRE_LANGUAGES=1 (CI), never run into a crash that would take its chunk's other runs along.
RUNTIME_ROUNDS = ("blind4",)
UNAVAILABLE = "unavailable"


@dataclass(frozen=True)
class BlindScenario:
    name: str
    kind: str  # fault | compliant
    preload: int = 0
    round: str = ROUNDS[0]

    @property
    def key(self) -> str:
        """The entry's name in blind_misses.toml: round 1's bare, later rounds' as ``<round>/<name>``."""
        return self.name if self.round == ROUNDS[0] else f"{self.round}/{self.name}"

    @property
    def label(self) -> str:
        return f"{self.key} ({'crowded' if self.preload else 'empty'})"

    @property
    def server(self) -> Path:
        return HERE / self.round / "server.py"


def entries(round_: str) -> list[dict[str, str]]:
    listed = subprocess.run(
        [sys.executable, str(HERE / round_ / "server.py"), "--list"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return [json.loads(line) for line in listed.stdout.splitlines() if line.strip()]


def scenarios() -> list[BlindScenario]:
    found = []
    for round_ in ROUNDS:
        for entry in entries(round_):
            name = entry["name"]
            if entry["kind"] == "fault":
                found.append(BlindScenario(name, "fault", CROWDED if entry["store"] == "crowded" else 0, round_))
            else:  # a compliant server must pass on an empty store and on a crowded one
                found += [BlindScenario(name, "compliant", preload, round_) for preload in (0, CROWDED)]
    return found


def known_misses() -> dict[str, str]:
    """Faults of the blind catalog the suite is known not to catch, each with why (blind_misses.toml)."""
    data = tomllib.loads(MISSES.read_text(encoding="utf-8"))
    return {name: str(row["why"]) for name, row in data.get("misses", {}).items()}


@contextlib.contextmanager
def blind_server(scenario: BlindScenario, key: str) -> Iterator[str]:
    command = [sys.executable, str(scenario.server), "--variant", scenario.name, "--port", "0"]
    command += ["--preload", str(scenario.preload)] if scenario.preload else []
    server = subprocess.Popen(
        command,
        env={**os.environ, "PETSTORE_API_KEY": key},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        out = server.stdout
        assert out is not None
        # A harness that hangs before its first line (round 3's, say, when nginx is missing) fails its run
        # after START_SECONDS instead of holding its whole chunk forever.
        first: list[str] = []
        reader = threading.Thread(target=lambda: first.append(out.readline()), daemon=True)
        reader.start()
        reader.join(START_SECONDS)
        base_url = first[0].strip() if first else ""
        assert base_url.startswith("http://127.0.0.1:"), f"{scenario.label}: no base URL ({base_url!r})"
        yield base_url
    finally:
        stop_process(server)


@cache
def unavailable(round_: str, name: str) -> str | None:
    """Why the entry's server cannot start on this machine (its language runtime is missing), or None."""
    if round_ not in RUNTIME_ROUNDS:
        return None
    command = [sys.executable, str(HERE / round_ / "server.py"), "--check", "--variant", name]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    return None if done.returncode == 0 else done.stderr.strip()[-300:]


def run_scenario(scenario: BlindScenario, runner: Runner = run_suite) -> SuiteRun:
    reason = unavailable(scenario.round, scenario.name)
    if reason:
        return SuiteRun(2, 0.0, summary={"verdict": UNAVAILABLE, "reason": reason}, output=reason)
    key = "blind-" + secrets.token_urlsafe(12)
    with blind_server(scenario, key) as base_url:
        return runner(base_url, key, *SUITE_ARGS)


def run_blind_catalog(chosen: list[BlindScenario] | None = None, parallel: int = 3) -> dict[BlindScenario, SuiteRun]:
    """Every server (or the chosen), ``parallel`` at a time, each judged in a suite host (``devtools/suitehost.py``)."""
    todo = scenarios() if chosen is None else chosen
    with suite_hosts() as hosts, ThreadPoolExecutor(max_workers=parallel) as pool:
        return dict(zip(todo, pool.map(lambda scenario: run_scenario(scenario, hosts.run), todo), strict=True))


def caught(run: SuiteRun) -> bool:
    return run.verdict == "not_conformant" and run.exit_code == 1 and not suite_errors(run)


def passed(run: SuiteRun) -> bool:
    return run.verdict == "conformant" and run.exit_code == 0 and not suite_errors(run)


def score_lines(results: dict[BlindScenario, SuiteRun]) -> list[str]:
    faults = [(s, r) for s, r in results.items() if s.kind == "fault"]
    compliant = [(s, r) for s, r in results.items() if s.kind == "compliant"]
    missed = sorted(s.label for s, r in faults if not caught(r))
    lines = []
    for round_ in ROUNDS:  # each round scored on its own line, as it was written on its own
        f_round = [r for s, r in faults if s.round == round_]
        c_round = [r for s, r in compliant if s.round == round_]
        lines.append(
            f"{round_}: faults caught {sum(map(caught, f_round))}/{len(f_round)}; "
            f"compliant servers passed {sum(map(passed, c_round))}/{len(c_round)}"
        )
    if missed:
        lines.append("blind faults not caught: " + ", ".join(missed))
    return lines
