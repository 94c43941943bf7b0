"""Run the contract suite against a server as a user would, and read which tests failed.

Used by the self-test (fault catalog and compliant variants) and by the benchmark: a
subprocess calling pytest with --base-url and the key in the environment, so that what is
proved is the real command line.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class SuiteRun:
    exit_code: int
    seconds: float
    failed: dict[str, set[str]] = field(default_factory=dict)  # test id -> clauses it names
    passed: int = 0
    skipped: int = 0
    output: str = ""

    def caught_clauses(self) -> set[str]:
        return {clause for clauses in self.failed.values() for clause in clauses}


def run_suite(base_url: str, api_key: str, *args: str, timeout: float = 600) -> SuiteRun:
    """pytest tests --base-url URL [args], key in PETSTORE_API_KEY; JUnit parsed for the verdict."""
    with tempfile.TemporaryDirectory(prefix="petstore-selfcheck-") as tmp:
        junit = Path(tmp) / "junit.xml"
        command = [
            sys.executable,
            "-m",
            "pytest",
            "tests",
            "--base-url",
            base_url,
            "-q",
            "-p",
            "no:cacheprovider",
            f"--junitxml={junit}",
            f"--report-dir={Path(tmp) / 'reports'}",
            "-o",
            "junit_family=xunit1",
            *args,
        ]
        env = {**os.environ, "PETSTORE_API_KEY": api_key}
        env.pop("PETSTORE_BASE_URL", None)
        started = time.monotonic()
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout, check=False)
        run = SuiteRun(done.returncode, time.monotonic() - started, output=done.stdout + done.stderr)
        if junit.exists():
            _read_junit(junit, run)
        return run


def _read_junit(path: Path, run: SuiteRun) -> None:
    for case in ET.parse(path).getroot().iter("testcase"):
        test_id = f"{case.get('classname')}::{case.get('name')}"
        clauses = {p.get("value", "") for p in case.iter("property") if p.get("name") == "clause"}
        if case.find("failure") is not None or case.find("error") is not None:
            run.failed[test_id] = clauses
        elif case.find("skipped") is not None:
            run.skipped += 1
        else:
            run.passed += 1
