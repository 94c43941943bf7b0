"""Helpers of the gate's self-tests (compare, waivers, certify/verify/replay, coverage).

``served`` starts the catalog's server (``python -m devtools.catalog``: a fault or the reference) on a
port of our choosing, so that a second server can take the first one's place (replay against a fixed
server); ``tool`` runs ``petstore-contract <subcommand>`` as a user would, in a subprocess.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import reportdata
from devtools.launcher import ROOT, stop_process
from petstore_contract import cli

KEY = "gate-selftest-key-5d1c9a"  # long enough to be redacted everywhere (redaction.MIN_KEY_LENGTH)
STARTUP = 30.0
QUICK = ("--contract-profile", "quick")
# A small selection that judges the credential clauses on every operation (about 2 s).
CREDENTIALS = ("-k", "refused_credential", *QUICK)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextlib.contextmanager
def served(*args: str, port: int | None = None, key: str = KEY) -> Iterator[str]:
    """The reference server (``args``: e.g. ``--fault NAME``) on ``port``; yields its base URL.  Started
    from the checkout's root, where ``devtools`` is found."""
    port = port or free_port()
    env = {**os.environ, "PETSTORE_API_KEY": key}
    command = [sys.executable, "-m", "devtools.catalog", "--port", str(port), *args]
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_until_listening(port, process)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        stop_process(process)


def _wait_until_listening(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + STARTUP
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the reference server exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"the reference server did not listen on {port} within {STARTUP} s")


def tool(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None, timeout: float = 600) -> Any:
    """``petstore-contract ARGS`` (``python -m petstore_contract.cli``): a CompletedProcess with text output."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("PETSTORE_", "GITHUB_STEP"))}
    command = [sys.executable, "-m", "petstore_contract.cli", *args]
    return subprocess.run(
        command, env=environment | (env or {}), cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
    )


def command(*args: str) -> Any:
    """``petstore-contract ARGS`` called in this process (``cli.main``), for the file-reading subcommands
    (``compare``, ``verify``) whose judgement a test is about: the same exit code and output as ``tool``'s,
    without an interpreter's start-up (about a second of CPU a call).  What a process shows (the console
    script, the exit status a shell sees) is ``tool``'s, and each subcommand keeps tests that use it."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(list(args))
    return subprocess.CompletedProcess(list(args), code, out.getvalue(), err.getvalue())


def one_line(done: Any) -> str:
    """The command's error output, asserted to be one line and no traceback."""
    text = (done.stderr or "").strip()
    assert "Traceback" not in done.stderr + done.stdout, done.stderr
    assert len(text.splitlines()) == 1, text
    return text


def write_json(path: Path, data: dict[str, Any]) -> Path:
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path


def chromium_browser() -> Any:
    """A context manager of Chromium through Playwright, found as test_reports.py finds it: skipped
    without one, failed instead when PETSTORE_REQUIRE_BROWSER=1 (CI)."""
    missing = ""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing = "the playwright package is not installed (pip install -e '.[dev]')"
    executable = reportdata.chromium_path()
    if executable is None:
        missing = missing or "no Chromium on PATH (apt-get install chromium) nor in $PETSTORE_CHROMIUM"
    if missing:
        if os.environ.get("PETSTORE_REQUIRE_BROWSER") == "1":
            pytest.fail(f"PETSTORE_REQUIRE_BROWSER=1 but {missing}")
        pytest.skip(missing)

    @contextlib.contextmanager
    def launched() -> Iterator[Any]:
        with sync_playwright() as playwright:
            chromium = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
            try:
                yield chromium
            finally:
                chromium.close()

    return launched


def page_width(html: Path, width: int) -> int:
    """How wide report.html lays out in a ``width`` pixel window, JavaScript off (its scroll width)."""
    with chromium_browser()() as chromium:
        context = chromium.new_context(java_script_enabled=False, viewport={"width": width, "height": 900})
        page = context.new_page()
        page.goto(html.as_uri())
        scroll: int = page.evaluate("document.documentElement.scrollWidth")
        context.close()
        return scroll
