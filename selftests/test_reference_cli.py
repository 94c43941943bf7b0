"""The reference server on its own (python -m petstore_contract.reference), as a person would start it,
and the contract suite run against it with --base-url."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

from petstore_contract.reference import FAULTS, VARIANTS
from petstore_contract.selfcheck import run_suite

CLI = [sys.executable, "-m", "petstore_contract.reference"]


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[str, str]]:
    key = "cli-test-key-7f3a"
    env = {**os.environ, "PETSTORE_API_KEY": key}
    process = subprocess.Popen(
        [*CLI, "--port", "0"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        banner = [process.stdout.readline() for _ in range(2)] if process.stdout else []
        assert banner[1].startswith("base URL: http://127.0.0.1:"), banner
        yield banner[1].split(": ", 1)[1].strip(), key
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_suite_passes_against_a_separately_started_reference(served: tuple[str, str]) -> None:
    base_url, key = served
    run = run_suite(base_url, key, "--contract-profile", "quick")
    assert run.exit_code == 0, run.output[-3000:]
    assert run.passed > 100 and not run.failed


def test_list_names_every_variant_and_fault() -> None:
    listing = subprocess.run([*CLI, "--list"], capture_output=True, text=True, timeout=30, check=True).stdout
    assert all(name in listing for name in [*VARIANTS, *FAULTS])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--fault", "no_such_fault"], "invalid choice: 'no_such_fault'"),
        (["--variant", "nope"], "invalid choice: 'nope'"),
        (["--port", "70000"], "--port must be between 0 and 65535"),
        (["--port", "abc"], "invalid int value"),
    ],
)
def test_bad_options_get_one_line(args: list[str], message: str) -> None:
    done = subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 2
    assert message in done.stderr and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith("python -m petstore_contract.reference: error:")


def test_port_in_use_is_one_line() -> None:
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        env = {**os.environ, "PETSTORE_API_KEY": "k"}
        done = subprocess.run(
            [*CLI, "--port", str(port)], capture_output=True, text=True, timeout=30, check=False, env=env
        )
    assert done.returncode == 2 and "cannot listen on 127.0.0.1" in done.stderr and "Traceback" not in done.stderr
