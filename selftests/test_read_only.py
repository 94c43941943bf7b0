"""Read-only runs send no write: ``--read-only`` and the production target's default.

The suite runs as a subprocess against a reference server started here; the server counts
every request that is not GET/HEAD/OPTIONS (``store.write_count``), so any POST, from a
targeted, generated or stateful test, fails these tests.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from petstore_contract.reference import BackgroundServer, build_app
from petstore_contract.selfcheck import ROOT, SuiteRun, run_suite

KEY = "read-only-selftest-key-2a7c55"
SKIP_REASON = "read-only run: this test has to POST"


@pytest.fixture
def reference() -> Iterator[BackgroundServer]:
    """A reference server holding a few animals (a production store is not empty)."""
    with BackgroundServer(build_app(KEY)) as server:
        for index, status in enumerate(("available", "pending", "sold")):
            answer = requests.post(
                f"{server.base_url}/pets",
                json={"name": f"resident-{index}", "categoryId": index, "status": status},
                headers={"Authorization": f"Bearer {KEY}"},
                timeout=10,
            )
            assert answer.status_code == 201
        yield server


def writes(server: BackgroundServer) -> int:
    return int(server.app.state.store.write_count)


def assert_read_only_pass(run: SuiteRun, server: BackgroundServer, writes_before: int) -> None:
    assert run.exit_code == 0, run.output[-3000:]
    assert writes(server) == writes_before, f"{writes(server) - writes_before} writes reached the server"
    skipped = [int(n) for n in re.findall(rf"SKIPPED \[(\d+)\] \S+: {re.escape(SKIP_REASON)}", run.output)]
    assert sum(skipped) >= 30 and run.skipped >= sum(skipped), run.output[-3000:]
    assert run.passed >= 50


def test_read_only_run_sends_no_write(reference: BackgroundServer) -> None:
    before = writes(reference)
    run = run_suite(reference.base_url, KEY, "--read-only", "-rs", "--contract-profile", "quick")
    assert_read_only_pass(run, reference, before)
    assert reference.app.state.store.request_count > 100, "the generated and targeted GETs did run"


def test_read_only_run_under_xdist_sends_no_write(reference: BackgroundServer) -> None:
    before = writes(reference)
    run = run_suite(reference.base_url, KEY, "--read-only", "-rs", "-n", "2", "--contract-profile", "quick")
    assert_read_only_pass(run, reference, before)


def test_production_target_is_read_only_by_default(reference: BackgroundServer, tmp_path: Path) -> None:
    before = writes(reference)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PETSTORE_")}
    env.update(PETSTORE_PRODUCTION_API_KEY=KEY, PETSTORE_PRODUCTION_BASE_URL=reference.base_url)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "tests",
            "--target",
            "production",
            "-q",
            "-rs",
            "-p",
            "no:cacheprovider",
            "--contract-profile",
            "quick",
            "-n",
            "2",  # xdist workers find the key in the target's variable
            f"--report-dir={tmp_path}",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    assert writes(reference) == before, "the production target was written"
    assert SKIP_REASON in done.stdout


def test_the_write_counter_sees_a_read_write_run(reference: BackgroundServer) -> None:
    """The control: without --read-only the same selection does POST, and the counter shows it."""
    before = writes(reference)
    run = run_suite(reference.base_url, KEY, "-m", "writes and not generated", "-k", "test_create")
    assert run.exit_code == 0, run.output[-3000:]
    assert writes(reference) > before
