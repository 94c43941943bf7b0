"""The reference server on its own (``python -m petstore_contract.reference``), as a person would start
it, and the contract suite run against it with ``--base-url``; the checkout's catalog command
(``python -m devtools.catalog``), which is the same command line plus ``--fault``, ``--variant`` and
``--list``.

Every request and every child process has a timeout; the servers listen on 127.0.0.1 only.
"""

from __future__ import annotations

import os
import queue
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit

import pytest
import requests

from devtools.catalog import FAULTS, UNJUDGEABLE, VARIANTS
from devtools.launcher import ROOT
from gatekit import QUICK
from hosted import run_hosted

CLI = [sys.executable, "-m", "petstore_contract.reference"]
CATALOG = [sys.executable, "-m", "devtools.catalog"]  # run from the checkout's root, where devtools is
KEY = "cli-test-key-7f3a"
STARTUP = 30.0  # seconds for the server to print its banner


def reference_cli(
    *args: str, env: dict[str, str] | None = None, timeout: float = 30, cli: list[str] = CLI
) -> subprocess.CompletedProcess[str]:
    """The command line run to completion (for --list and the one-line errors)."""
    return subprocess.run(
        [*cli, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


@contextmanager
def served(*args: str, key: str | None = KEY, cli: list[str] = CLI) -> Iterator[tuple[str, list[str]]]:
    """The server started in the foreground of a child process: its base URL and its banner lines."""
    env = {k: v for k, v in os.environ.items() if k != "PETSTORE_API_KEY"}
    if key is not None:
        env["PETSTORE_API_KEY"] = key
    process = subprocess.Popen(
        [*cli, "--port", "0", *args], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in process.stdout or ()], daemon=True).start()
    try:
        banner = []
        for _ in range(2 if key is not None else 3):
            try:
                banner.append(lines.get(timeout=STARTUP))
            except queue.Empty:
                pytest.fail(f"no banner line within {STARTUP} s; got {banner}")
        assert banner[1].startswith("base URL: http://127.0.0.1:"), banner
        base_url = banner[1].split(": ", 1)[1].strip()
        wait_until_listening(base_url)
        yield base_url, banner
    finally:
        process.terminate()
        process.wait(timeout=10)


def wait_until_listening(base_url: str) -> None:
    """The banner is printed once the port is bound; uvicorn listens on it a moment later."""
    parts = urlsplit(base_url)
    deadline = time.monotonic() + STARTUP
    while True:
        try:
            with socket.create_connection((parts.hostname, parts.port), timeout=1):
                return
        except OSError:
            if time.monotonic() > deadline:
                pytest.fail(f"{base_url} does not accept connections within {STARTUP} s")
            time.sleep(0.05)


# Tier 2: in tier 1 the installed wheel runs against a separately started reference (test_wheel.py).
@pytest.mark.tier_2
def test_suite_is_conformant_against_a_separately_started_reference() -> None:
    with served() as (base_url, banner):
        assert banner[0].startswith("Pet Store reference (reference")
        run = run_hosted(base_url, KEY, *QUICK, timeout=300)
    assert (run.exit_code, run.verdict) == (0, "conformant"), run.output[-3000:]
    assert run.summary["base_url"] == base_url and not run.violated()
    assert run.output.strip().splitlines()[-1].startswith("Conformant: ")


def test_a_fault_from_the_catalog_command_is_served() -> None:
    """--fault reaches the served app: the fault's own symptom, seen with a plain request."""
    with served("--fault", "create_returns_200", "--variant", "capped", cli=CATALOG) as (base_url, banner):
        assert banner[0].startswith("Pet Store reference (capped, fault create_returns_200)"), banner
        answer = requests.post(
            f"{base_url}/pets",
            json={"name": "Rex", "categoryId": 1},
            headers={"Authorization": f"Bearer {KEY}"},
            timeout=10,
        )
    assert answer.status_code == 200


def test_knobs_and_a_made_key() -> None:
    """Without PETSTORE_API_KEY a key is made and printed once; knobs such as --preload apply."""
    with served("--preload", "3", key=None) as (base_url, banner):
        assert banner[2].startswith("API key (made for this run")
        made = banner[2].rsplit(": ", 1)[1].strip()
        listed = requests.get(f"{base_url}/pets", headers={"Authorization": f"Bearer {made}"}, timeout=10)
        refused = requests.get(f"{base_url}/pets", headers={"Authorization": f"Bearer {KEY}"}, timeout=10)
    assert banner[0].startswith("Pet Store reference (reference (adjusted)")
    assert listed.status_code == 200 and len(listed.json()) == 3
    assert refused.status_code == 401


def test_the_catalog_command_lists_every_variant_unjudgeable_server_and_fault() -> None:
    done = reference_cli("--list", cli=CATALOG)
    assert done.returncode == 0, done.stderr
    assert all(name in done.stdout for name in [*VARIANTS, *UNJUDGEABLE, *FAULTS])


@pytest.mark.parametrize(
    ("cli", "args", "message"),
    [
        # The installed command serves the clean reference only: the catalog is the checkout's.
        (CLI, ["--fault", "create_returns_200"], "unrecognized arguments: --fault create_returns_200"),
        (CLI, ["--variant", "capped"], "unrecognized arguments: --variant capped"),
        (CLI, ["--list"], "unrecognized arguments: --list"),
        (CLI, ["--port", "70000"], "--port must be between 0 and 65535"),
        (CLI, ["--port", "abc"], "invalid int value"),
        (CLI, ["--page-cap", "0"], "--page-cap must be between 1 and 100"),
        (CLI, ["--latency-ms", "-5"], "--latency-ms must be between 0 and 60000"),
        (CATALOG, ["--fault", "no_such_fault"], "invalid choice: 'no_such_fault'"),
        (CATALOG, ["--variant", "nope"], "invalid choice: 'nope'"),
        (CATALOG, ["--page-cap", "101"], "--page-cap must be between 1 and 100"),
    ],
)
def test_bad_options_get_one_line(cli: list[str], args: list[str], message: str) -> None:
    done = reference_cli(*args, cli=cli)
    assert done.returncode == 2
    assert message in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert done.stderr.startswith(f"python -m {cli[-1]}: error:")


def test_port_in_use_is_one_line() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = reference_cli("--port", str(port), env={**os.environ, "PETSTORE_API_KEY": "k"})
    assert done.returncode == 2, done.stdout + done.stderr
    assert "cannot listen on 127.0.0.1" in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
