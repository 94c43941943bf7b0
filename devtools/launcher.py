"""The one way the project runs the contract suite as a user would: pytest in a subprocess.

Used by the self-tests (fault catalog, compliant variants, hostile targets, parallel runs) and by
the benchmark.  The key travels in the environment, the verdict comes back from summary.json.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from petstore_contract.interface.spec import suite_dir

ROOT = Path(__file__).resolve().parents[1]
PLUGINS = ROOT / "selftests" / "plugins"


def with_plugins(env: dict[str, str] | None = None) -> dict[str, str]:
    """``env`` with the self-tests' plugin folder on PYTHONPATH, so that ``-p NAME`` loads one of them
    (pytest imports -p plugins before it reads its ini file's ``pythonpath``)."""
    chosen = dict(env or {})
    path = chosen.get("PYTHONPATH", os.environ.get("PYTHONPATH", ""))
    chosen["PYTHONPATH"] = os.pathsep.join(p for p in (str(PLUGINS), path) if p)
    return chosen


@dataclass
class SuiteRun:
    exit_code: int
    seconds: float
    summary: dict[str, Any] = field(default_factory=dict)
    output: str = ""
    reports: dict[str, str] = field(default_factory=dict)  # file name -> its text

    @property
    def verdict(self) -> str:
        return str(self.summary.get("verdict", "none"))

    def clauses(self, outcome: str) -> set[str]:
        return {c["id"] for c in self.summary.get("clauses", ()) if c["outcome"] == outcome}

    def violated(self) -> set[str]:
        return self.clauses("violated")

    def findings(self) -> list[dict[str, Any]]:
        return [f for c in self.summary.get("clauses", ()) for f in c.get("findings", ())]

    def count(self, name: str) -> int:
        return int(self.summary.get(name, 0))


class Runner(Protocol):
    """What runs the suite once: ``run_suite`` (a process of its own) or ``SuiteHosts.run`` (a host's)."""

    def __call__(self, base_url: str | None, api_key: str | None, *args: str) -> SuiteRun: ...


def suite_command(reports: Path, base_url: str | None, args: Sequence[str], suite: Path | None = None) -> list[str]:
    """The pytest command line of a suite run: reports (and JUnit) in ``reports``; ``suite`` defaults to this one."""
    return [sys.executable, "-m", "pytest", *pytest_args(reports, base_url, args, suite)]


def pytest_args(reports: Path, base_url: str | None, args: Sequence[str], suite: Path | None = None) -> list[str]:
    """The arguments pytest gets in a suite run (``suite_command`` without the interpreter)."""
    command = [str(suite or suite_dir()), "-q", "-p", "no:cacheprovider"]
    command += [f"--contract-report-dir={reports}", f"--junitxml={reports / 'junit.xml'}", "-o", "junit_family=xunit1"]
    if base_url:
        command += ["--base-url", base_url]
    return command + list(args)


def run_suite(
    base_url: str | None,
    api_key: str | None,
    *args: str,
    timeout: float = 600,
    env: dict[str, str] | None = None,
    keep: tuple[str, ...] = ("summary.json",),
    cwd: Path | None = None,
) -> SuiteRun:
    """``pytest <suite> [--base-url URL] [args]`` with the key in PETSTORE_API_KEY; reports in a temporary folder."""
    with tempfile.TemporaryDirectory(prefix="petstore-suite-run-") as tmp:
        reports = Path(tmp) / "reports"
        command = suite_command(reports, base_url, args)
        environment = {**os.environ, **(env or {})}
        environment.pop("PETSTORE_BASE_URL", None) if base_url else None
        if api_key is not None:
            environment["PETSTORE_API_KEY"] = api_key
        started = time.monotonic()
        done = subprocess.run(
            command, cwd=cwd or ROOT, env=environment, capture_output=True, text=True, timeout=timeout, check=False
        )
        run = SuiteRun(done.returncode, time.monotonic() - started, output=done.stdout + done.stderr)
        return read_reports(run, reports, keep)


def read_reports(run: SuiteRun, reports: Path, keep: tuple[str, ...]) -> SuiteRun:
    """``run`` with its summary (the verdict) and the report files named in ``keep``, as far as they exist."""
    summary = reports / "summary.json"
    if summary.exists():
        run.summary = json.loads(summary.read_text(encoding="utf-8"))
    for name in keep:
        path = reports / name
        if path.exists():
            run.reports[name] = path.read_text(encoding="utf-8")
    return run


def stop_process(process: subprocess.Popen[Any]) -> None:
    """Terminate a server the self-checks started; kill it when it does not stop within 10 s."""
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)
