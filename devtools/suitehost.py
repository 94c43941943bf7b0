"""Suite runs many at a time, each a whole pytest session, in interpreters that outlive one run.

The catalogs of the self-tests (the kill matrix, the blind rounds) run the contract suite some 490
times.  Started afresh, an interpreter spends about 3 of a quick run's 8 s of CPU importing pytest,
Schemathesis, Hypothesis and the plugin, and compiling the project (this machine writes no
bytecode).  None of that is what a catalog proves, so a *host* keeps one interpreter and runs each
suite run in it as ``pytest.main`` with the run's own command line, key and reports folder: the same
plugin, collection, set-up, tests and verdict as ``python -m pytest``, minus the start-up.  What a
separate process does prove (the command line, the entry point, exit codes seen by a shell, signals)
stays with ``launcher.run_suite``, which the other self-tests use.

Protocol: one JSON line a run on the host's stdin (``{"command": [...], "env": {...}, "output": PATH}``),
one JSON line back on a pipe of its own (``{"exit_code": N}``).  The run's terminal output goes to
``output`` (file descriptors 1 and 2 pointed at it), never onto the protocol's pipe.  A host that does
not answer within the run's timeout is killed and replaced; its run ends ``TIMED_OUT``.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import queue
import selectors
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from devtools.launcher import PLUGINS, ROOT, SuiteRun, pytest_args, read_reports, stop_process

TIMED_OUT = -9  # the exit code of a run whose host was killed for taking too long
HOST_DIED = -11  # the exit code of a run whose host ended without answering
# A host is replaced after this many runs: its resident memory grows by 20-50 MB a run (measured:
# 227 MB after one quick run, 493 MB after eight; not Python objects, whose count barely moves, but
# memory the allocator keeps), and a fresh interpreter costs one start-up in 12.
RUNS_PER_HOST = 12
# Variables an interpreter reads once, at start-up or first use (sys.path, tempfile's folder): a run that
# sets them needs a process of its own (``launcher.run_suite``), so a host refuses them.
READ_AT_START = frozenset({"PYTHONPATH", "TMPDIR", "TEMP", "TMP", "PYTHONHASHSEED"})
# A run draws as it would in a process of its own only if the host has the same *local* modules loaded
# (Hypothesis draws strings and numbers from their constants: ``petstore_contract/plugin/loaded.py``).  So
# the host starts from ``-c`` (no ``__main__`` file) and lets go of its own modules before the first run
# (``serve``), and a run that loads a plugin of its own (``-p NAME``, a module of the checkout) retires
# its host: that module would stay loaded for the host's later runs.
BOOT = "import sys; from devtools import suitehost; suitehost.serve(sys.argv[1])"


class SuiteHost:
    """One interpreter serving suite runs, one at a time (``pytest.main`` is not reentrant)."""

    def __init__(self) -> None:
        reply_read, reply_write = os.pipe()
        self.process = subprocess.Popen(
            [sys.executable, "-c", BOOT, str(reply_write)],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(reply_write,),
            env=_host_environment(),
            text=True,
        )
        os.close(reply_write)
        self.replies = os.fdopen(reply_read, "r", encoding="utf-8")
        self.runs = 0

    def run(
        self,
        base_url: str | None,
        api_key: str | None,
        args: tuple[str, ...],
        timeout: float,
        env: dict[str, str] | None = None,
        keep: tuple[str, ...] = ("summary.json",),
    ) -> SuiteRun:
        """One run; ``env`` adds to the host's environment for this run alone (not what is ``READ_AT_START``),
        ``keep`` names the report files to read back, as in ``launcher.run_suite``."""
        assert self.process.stdin is not None
        if fixed := READ_AT_START & set(env or {}):
            raise ValueError(f"a suite host cannot change {', '.join(sorted(fixed))}: use launcher.run_suite")
        self.runs += 1
        if _loads_a_plugin(args):
            self.runs = RUNS_PER_HOST
        with tempfile.TemporaryDirectory(prefix="petstore-suite-run-") as tmp:
            reports = Path(tmp) / "reports"
            output = Path(tmp) / "output.txt"
            run_env = dict(env or {}) | ({"PETSTORE_API_KEY": api_key} if api_key is not None else {})
            request = {"command": pytest_args(reports, base_url, args), "env": run_env, "output": str(output)}
            started = time.monotonic()
            try:
                self.process.stdin.write(json.dumps(request) + "\n")
                self.process.stdin.flush()
                code = self._reply(timeout)
            except (BrokenPipeError, EOFError):
                code = HOST_DIED
            run = SuiteRun(code, time.monotonic() - started)
            run.output = output.read_text(encoding="utf-8", errors="replace") if output.exists() else ""
            if code in (TIMED_OUT, HOST_DIED):
                run.output += f"\n[suite host: {'timed out' if code == TIMED_OUT else 'ended without an answer'}]"
            read_reports(run, reports, keep)
            return run

    def _reply(self, timeout: float) -> int:
        with selectors.DefaultSelector() as selector:
            selector.register(self.replies, selectors.EVENT_READ)
            if not selector.select(timeout):
                self.process.kill()  # the run is abandoned: nothing of it is waited for
                self.close()
                return TIMED_OUT
        line = self.replies.readline()
        if not line:
            raise EOFError
        return int(json.loads(line)["exit_code"])

    @property
    def alive(self) -> bool:
        return self.process.poll() is None and self.runs < RUNS_PER_HOST

    def close(self) -> None:
        if self.process.stdin is not None:
            with contextlib.suppress(OSError):
                self.process.stdin.close()
        if self.process.poll() is None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=10)
            if self.process.poll() is None:
                stop_process(self.process)
        self.replies.close()


class SuiteHosts:
    """Hosts, one per run side by side (the pool grows to the callers' concurrency); a dead, timed-out
    or well-used host is replaced."""

    def __init__(self) -> None:
        self.idle: queue.SimpleQueue[SuiteHost] = queue.SimpleQueue()
        self.all: list[SuiteHost] = []

    def run(
        self,
        base_url: str | None,
        api_key: str | None,
        *args: str,
        timeout: float = 600,
        env: dict[str, str] | None = None,
        keep: tuple[str, ...] = ("summary.json",),
    ) -> SuiteRun:
        host = self._take()
        try:
            return host.run(base_url, api_key, args, timeout, env, keep)
        finally:
            self.idle.put(host)

    def _take(self) -> SuiteHost:
        try:
            host = self.idle.get_nowait()
        except queue.Empty:
            return self._new()
        if host.alive:
            return host
        host.close()
        self.all.remove(host)
        return self._new()

    def _new(self) -> SuiteHost:
        host = SuiteHost()
        self.all.append(host)
        return host

    def close(self) -> None:
        for host in self.all:
            host.close()
        self.all.clear()


@contextlib.contextmanager
def suite_hosts() -> Iterator[SuiteHosts]:
    hosts = SuiteHosts()
    try:
        yield hosts
    finally:
        hosts.close()


def _loads_a_plugin(args: tuple[str, ...]) -> bool:
    return any(a == "-p" and not b.startswith("no:") for a, b in itertools.pairwise(args))


def _host_environment() -> dict[str, str]:
    # The host's own environment carries no key and no target: each run brings its own.  The self-tests'
    # plugins are on its path, so that a run's ``-p NAME`` finds one as ``launcher.with_plugins`` lets it.
    env = {k: v for k, v in os.environ.items() if k not in ("PETSTORE_API_KEY", "PETSTORE_BASE_URL")}
    path = (str(ROOT), str(PLUGINS), os.environ.get("PYTHONPATH", ""))
    env["PYTHONPATH"] = os.pathsep.join(p for p in path if p)
    return env


# -- the host's side -------------------------------------------------------------------------------


def serve(reply_fd: str) -> None:
    import pytest  # imported once, here: what every run of this host shares

    replies = os.fdopen(int(reply_fd), "w", encoding="utf-8")
    # The host's own modules (this one, the launcher) are local code a run in a process of its own has
    # not loaded: out of ``sys.modules`` before the first run draws (the functions keep their globals).
    for name in [name for name in sys.modules if name == "devtools" or name.startswith("devtools.")]:
        del sys.modules[name]
    baseline = dict(os.environ)
    for line in sys.stdin:
        request: dict[str, Any] = json.loads(line)
        os.environ.clear()
        os.environ.update({**baseline, **request["env"]})
        with _output_to(request["output"]):
            try:
                code = int(pytest.main(request["command"]))
            except BaseException:  # a run that breaks the host's loop is that run's error, not the host's end
                traceback.print_exc()
                code = 99
        os.environ.clear()
        os.environ.update(baseline)
        replies.write(json.dumps({"exit_code": code}) + "\n")
        replies.flush()


@contextlib.contextmanager
def _output_to(path: str) -> Iterator[None]:
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    with open(path, "w", encoding="utf-8") as output:
        os.dup2(output.fileno(), 1)
        os.dup2(output.fileno(), 2)
        try:
            yield
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
