"""SIGTERM and SIGHUP end a contract run as Ctrl-C does (issue 31).

A CI system that cancels a job, or ends one at its time limit, sends SIGTERM (GitLab, Jenkins,
Kubernetes; GitHub Actions sends SIGINT, then SIGTERM) and SIGKILLs 7.5-30 s later.  The run must
stop sending, judge what it has, write every report (inconclusive, "stopped by SIGTERM after N of M
tests"), print its verdict line and exit 6 within about 5 s, and leave no process of its own behind
(the embedded reference, xdist workers, the stateful walks' child processes).

Each run starts in a session of its own, so that every process it starts can be found afterwards.
A run against a target that holds it mid-way (every answer 100 ms away) gets its signal once its
tests have started and that target has answered ``INTO_THE_RUN`` more requests (hundreds more to go,
seconds of them however fast the machine); one against the embedded reference, which may finish in
seconds on a fast machine, is held at its first test by ``selftests/plugins/hold_run.py`` and gets its
signal there.  Neither waits a fixed time: on a fast machine the run would end before its signal.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import secrets
import signal
import subprocess
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

from devtools.launcher import ROOT, suite_command
from loopback import Counted
from petstore_contract.plugin.stopping import StopSignals
from petstore_contract.reference import BackgroundServer, build_app
from petstore_contract.reference.variants import REFERENCE
from petstore_contract.transport import RunGuard, TargetProblem

PLUGINS = Path(__file__).resolve().parent / "plugins"
SCHEMA = ROOT / "src" / "petstore_contract" / "reporting" / "summary.schema.json"
# A test's result on the terminal: the tests are running (set-up's requests, which come first, are done).
# One process prints a file's path, then a character per test; xdist a character per test under its
# "N workers [M items]" line.
STARTED = re.compile(r"^\S*test_\w+\.py [.sxFE]|^\d+ workers \[\d+ items\]\s*\n+[.sxFE]", re.MULTILINE)
# Requests answered after the first test's result, before the signal: the tests are sending, with some
# 400 more to go (at 100 ms each and 16 at a time, at least 2.5 s of them on any machine).
INTO_THE_RUN = 40
WITHIN = 7.5  # the issue asks for about 5 s; the shortest grace a CI system gives before SIGKILL is 7.5 s


def _session_members(sid: int) -> list[str]:
    """The processes still alive in session ``sid`` (pid and command)."""
    alive = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid and fields[0] != "Z":  # fields after the name: state, ppid, pgrp, session
            cmdline = (stat.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            alive.append(f"{stat.parent.name}: {cmdline[:200]}")
    return alive


def _stop_a_run(
    tmp_path: Path,
    signame: str,
    base_url: str | None,
    key: str,
    *args: str,
    group: bool = False,
    counted: Counted | None = None,
) -> dict[str, object]:
    """The run, signalled ``INTO_THE_RUN`` requests into its tests (``counted``: the target's count), or
    (``counted`` None) held at its first test."""
    reports = tmp_path / "reports"
    command = [word for word in suite_command(reports, base_url, args) if word != "-q"]  # "collected" shows
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PETSTORE_", "PYTEST_"))}
    env["PETSTORE_API_KEY"] = key
    held = tmp_path / "held"
    if counted is None:  # the run waits at its first test until the signal comes: no race with a fast machine
        command += ["-p", "hold_run"]
        env |= {"PYTHONPATH": str(PLUGINS), "HOLD_RUN_FILE": str(held)}
    output = tmp_path / "output.txt"
    with output.open("wb") as out:
        process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        deadline = time.monotonic() + 300
        baseline: int | None = None  # the target's count when the tests started
        while not (held.exists() if counted is None else baseline is not None and counted.requests >= baseline):
            assert process.poll() is None and time.monotonic() < deadline, output.read_text()[-3000:]
            if counted is not None and baseline is None and STARTED.search(output.read_text(errors="replace")):
                baseline = counted.requests + INTO_THE_RUN
            time.sleep(0.05)
        assert process.poll() is None, "the run ended before the signal: " + output.read_text()[-2000:]
        sent = time.monotonic()
        if group:  # every process of the run gets it, the workers and the child processes too
            os.killpg(process.pid, getattr(signal, signame))
        else:
            process.send_signal(getattr(signal, signame))
        code = process.wait(timeout=60)
        seconds = time.monotonic() - sent
        time.sleep(0.5)  # a process that outlives the run would still be there
        left = _session_members(process.pid)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    text = output.read_text(errors="replace")
    print(f"{signame} {' '.join(args)}: exit {code} {seconds:.2f} s after the signal")  # the measurement
    return {"code": code, "seconds": seconds, "left": left, "output": text, "reports": reports}


def _check(stopped: dict[str, object], signame: str, key: str) -> None:
    output, reports = str(stopped["output"]), Path(str(stopped["reports"]))
    assert stopped["code"] == 6, output[-3000:]
    assert float(str(stopped["seconds"])) < WITHIN, f"{stopped['seconds']} s after {signame}"
    assert stopped["left"] == [], stopped["left"]
    summary = json.loads((reports / "summary.json").read_text(encoding="utf-8"))
    jsonschema.validate(summary, json.loads(SCHEMA.read_text(encoding="utf-8")))
    assert summary["verdict"] == "inconclusive"
    reason = re.fullmatch(rf"stopped by {signame} after (\d+) of (\d+) tests", summary["reason"])
    assert reason and 0 <= int(reason.group(1)) < int(reason.group(2)), summary["reason"]
    assert output.rstrip().splitlines()[-1] == f"Inconclusive: {summary['reason']}"  # the verdict line, last
    assert summary["reason"] in (reports / "report.html").read_text(encoding="utf-8")
    junit = ET.parse(reports / "junit.xml").getroot()
    assert summary["reason"] in ET.tostring(junit, encoding="unicode")
    for path in reports.iterdir():
        assert key not in path.read_text(encoding="utf-8", errors="replace"), path.name
    assert key not in output


@pytest.mark.parametrize(
    ("args", "group"),
    # Tier 1 under xdist (the workers stop too); tier 2 in one process and with the whole group signalled.
    [
        pytest.param((), False, marks=pytest.mark.tier_2),
        (("-n", "2"), False),
        pytest.param(("-n", "2"), True, marks=pytest.mark.tier_2),
    ],
    ids=["one-process", "xdist", "xdist-whole-group"],  # the whole group: as a terminal or GitLab's runner sends it
)
def test_sigterm_against_a_slow_target(tmp_path: Path, args: tuple[str, ...], group: bool) -> None:
    key = "stop-" + secrets.token_urlsafe(12)
    slow = dataclasses.replace(REFERENCE, latency_seconds=0.1)  # every answer 100 ms away
    counted = Counted(build_app(key, slow))
    with BackgroundServer(counted) as server:
        stopped = _stop_a_run(tmp_path, "SIGTERM", server.base_url, key, *args, group=group, counted=counted)
    _check(stopped, "SIGTERM", key)


def test_sighup_with_the_embedded_reference(tmp_path: Path) -> None:
    """No --base-url: the run's own reference server process must stop with it."""
    key = "stop-" + secrets.token_urlsafe(12)  # the embedded reference makes its own; this one is never sent
    stopped = _stop_a_run(tmp_path, "SIGHUP", None, key)
    _check(stopped, "SIGHUP", key)


def test_a_stopped_run_sends_nothing_in_any_of_its_processes(tmp_path: Path) -> None:
    """Two guards sharing a run's folder stand for two processes of the run (an xdist worker's, a child's)."""
    here, there = RunGuard(shared_dir=tmp_path, circuit_breaker=1), RunGuard(shared_dir=tmp_path, circuit_breaker=1)
    here.check()
    there.check()
    here.stop("stopped by SIGTERM")
    for guard in (here, there):
        with pytest.raises(TargetProblem, match=r"^stopped by SIGTERM; request not sent$"):
            guard.check()
    there.failed("connection reset")  # a request cut short by the stop says nothing about the target
    assert there.breaker_open() is None


def test_stop_signals_raise_once_and_are_restored() -> None:
    stops: list[str] = []
    signals = StopSignals(stops.append)
    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGHUP)
    signals.install()
    try:
        with pytest.raises(KeyboardInterrupt, match="stopped by SIGHUP"):
            os.kill(os.getpid(), signal.SIGHUP)
            time.sleep(5)
        os.kill(os.getpid(), signal.SIGTERM)  # the run is already ending: its reports must not be cut
        time.sleep(0.2)
    finally:
        signals.restore()
    assert stops == ["SIGHUP"] and signals.name == "SIGHUP"
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGHUP)) == before
