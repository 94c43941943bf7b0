"""Self-proof of the blind2 catalog: every fault shows, every compliant variant complies.

Run from the repository root: ``.venv/bin/pytest selftests/blind2`` (the
``pytest.ini`` here makes this folder its own rootdir).

- ``test_base_passes``: every probe passes on the compliant base, on an empty
  and on a crowded store (shared servers: probes must hold on a used store).
- ``test_fault_shown``: a fresh server for each fault fails its probe, and the
  base on the same kind of store passes that same probe.
- ``test_compliant_variant``: every compliant variant passes every probe.
- Servers start side by side (``WORKERS`` at a time); the probes of faults and
  variants run in threads, so the shared bases see concurrent clients.
- The harness contract: ``--list``, exit 2 errors, stop on stdin close and SIGTERM.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import catalog  # noqa: E402
import probes  # noqa: E402

SERVER = HERE / "server.py"
KEY = "blind2-Key_0123456789abcdef"
ENV = {**os.environ, "PETSTORE_API_KEY": KEY}
START_TIMEOUT = 60
WORKERS = 6


class Server:
    """One ``server.py`` process; its base URL is its first stdout line."""

    def __init__(self, variant: str, preload: int) -> None:
        self.variant = variant
        self.proc = subprocess.Popen(
            [sys.executable, str(SERVER), "--variant", variant, "--port", "0", "--preload", str(preload)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=ENV,
        )
        self.url: str | None = None
        self.ready = threading.Event()
        threading.Thread(target=self._read_url, daemon=True).start()

    def _read_url(self) -> None:
        line = self.proc.stdout.readline().decode().strip() if self.proc.stdout else ""
        self.url = line or None
        self.ready.set()

    def base(self) -> str:
        assert self.ready.wait(START_TIMEOUT), f"{self.variant}: no URL in {START_TIMEOUT}s"
        err = b""
        if not self.url and self.proc.stderr:
            err = self.proc.stderr.read()
        assert self.url and re.fullmatch(r"http://127\.0\.0\.1:[0-9]+/v1", self.url), (
            f"{self.variant}: first line {self.url!r}, stderr {err[-300:]!r}"
        )
        return self.url

    def client(self) -> probes.Client:
        return probes.Client(self.base(), KEY)

    def stop(self) -> int:
        """Close stdin: the server must stop by itself."""
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            return self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
            return -999


def preload(entry: dict[str, Any]) -> int:
    return catalog.CROWDED_PRELOAD if entry["store"] == "crowded" else 0


FAULT_NAMES = [e["name"] for e in catalog.FAULTS]
COMPLIANT_NAMES = [e["name"] for e in catalog.COMPLIANT]


@pytest.fixture(scope="session")
def bases() -> Any:
    servers = {"empty": Server("compliant", 0), "crowded": Server("compliant", 150)}
    yield servers
    for server in servers.values():
        assert server.stop() == 0


# the catalog -------------------------------------------------------------------------
def test_catalog_shape() -> None:
    names = [e["name"] for e in catalog.ENTRIES]
    assert len(names) == len(set(names))
    assert len(catalog.FAULTS) >= 45
    assert len(catalog.COMPLIANT) >= 12
    sources = "".join((HERE / f).read_text() for f in ("app.py", "store.py", "proxy.py", "handmade.py", "server.py"))
    for entry in catalog.ENTRIES:
        assert entry["kind"] in ("fault", "compliant")
        assert entry["store"] in ("empty", "crowded")
        assert entry["style"] in ("app", "gateway", "hand")
        assert entry["quote"] and entry["description"]
        for flag in entry["flags"]:
            assert f'"{flag}"' in sources, f"{entry['name']}: flag {flag} is used nowhere"
        if entry["kind"] == "fault":
            assert entry["probe"] in probes.PROBES and entry["demo"]
            assert entry["flags"], entry["name"]


def test_list_prints_the_catalog() -> None:
    out = subprocess.run(
        [sys.executable, str(SERVER), "--list"],
        capture_output=True,
        env={k: v for k, v in ENV.items() if k != "PETSTORE_API_KEY"},
        timeout=30,
        check=True,
    ).stdout.decode()
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["name"] for r in rows] == [e["name"] for e in catalog.ENTRIES]
    for row in rows:
        assert set(row) == {"name", "kind", "quote", "description", "store"}


@pytest.mark.parametrize(
    "args, env",
    [
        (["--variant", "compliant"], {k: v for k, v in ENV.items() if k != "PETSTORE_API_KEY"}),
        (["--variant", "no_such_variant"], ENV),
        (["--variant", "compliant", "--port", "x"], ENV),
        (["--variant", "compliant", "--bogus"], ENV),
        ([], ENV),
    ],
)
def test_harness_errors_exit_2(args: list[str], env: dict[str, str]) -> None:
    done = subprocess.run(
        [sys.executable, str(SERVER), *args], capture_output=True, env=env, stdin=subprocess.DEVNULL, timeout=30
    )
    assert done.returncode == 2
    assert done.stdout == b""
    assert len(done.stderr.decode().strip().splitlines()) == 1


@pytest.mark.parametrize("variant", ["compliant", "gateway_plain", "hand_newest_first"])
def test_sigterm_stops(variant: str) -> None:
    server = Server(variant, 3)
    client = server.client()
    assert client.call("GET", "/pets").status == 200
    server.proc.send_signal(signal.SIGTERM)
    assert server.proc.wait(15) == 0
    assert server.stop() == 0


# the base passes every probe -------------------------------------------------------
@pytest.mark.parametrize("store", ["empty", "crowded"])
@pytest.mark.parametrize("probe", list(probes.PROBES))
def test_base_passes(bases: dict[str, Server], probe: str, store: str) -> None:
    probes.PROBES[probe](bases[store].client())


# every fault shows -------------------------------------------------------------------
def run_fault(entry: dict[str, Any], bases: dict[str, Server]) -> dict[str, Any]:
    """Start the fault's server, run its probe there and on the base (same store)."""
    probe = probes.PROBES[entry["probe"]]
    outcome: dict[str, Any] = {"shown": None, "base": None, "stop": None}
    server = Server(entry["name"], preload(entry))
    try:
        started = time.monotonic()
        probe(server.client())
    except AssertionError as exc:
        outcome["shown"] = f"({time.monotonic() - started:.1f}s) {str(exc)[:240]}"
    finally:
        outcome["stop"] = server.stop()
    try:
        probe(bases[entry["store"]].client())
    except AssertionError as exc:
        outcome["base"] = str(exc)[:400]
    return outcome


def run_compliant(entry: dict[str, Any]) -> dict[str, Any]:
    """Start the variant's server and run every probe on it."""
    outcome: dict[str, Any] = {"failures": [], "stop": None}
    server = Server(entry["name"], preload(entry))
    try:
        client = server.client()
        for probe_name, probe in probes.PROBES.items():
            try:
                probe(client)
            except AssertionError as exc:
                outcome["failures"].append(f"{probe_name}: {str(exc)[:300]}")
    finally:
        outcome["stop"] = server.stop()
    return outcome


def selected(request: pytest.FixtureRequest, test: str) -> list[dict[str, Any]]:
    """The entries whose test was selected (so that -k runs only what it names)."""
    names = {
        item.callspec.params["name"]
        for item in request.session.items
        if getattr(item, "originalname", "") == test and hasattr(item, "callspec")
    }
    return [e for e in catalog.ENTRIES if e["name"] in names]


@pytest.fixture(scope="session")
def fault_outcomes(request: pytest.FixtureRequest, bases: dict[str, Server]) -> dict[str, dict[str, Any]]:
    with ThreadPoolExecutor(WORKERS) as workers:
        entries = selected(request, "test_fault_shown")
        futures = {e["name"]: workers.submit(run_fault, e, bases) for e in entries}
        return {name: future.result() for name, future in futures.items()}


@pytest.fixture(scope="session")
def compliant_outcomes(request: pytest.FixtureRequest) -> dict[str, dict[str, Any]]:
    with ThreadPoolExecutor(WORKERS) as workers:
        entries = selected(request, "test_compliant_variant")
        futures = {e["name"]: workers.submit(run_compliant, e) for e in entries}
        return {name: future.result() for name, future in futures.items()}


@pytest.mark.parametrize("name", FAULT_NAMES)
def test_fault_shown(fault_outcomes: dict[str, dict[str, Any]], name: str) -> None:
    """The fault's server fails the probe; the base on the same store passes it."""
    outcome = fault_outcomes[name]
    entry = catalog.BY_NAME[name]
    assert outcome["shown"], f"{name}: {entry['probe']} passed, the fault does not show"
    print(f"{name}: {entry['probe']} fails as expected {outcome['shown']}")
    assert outcome["base"] is None, f"base fails {entry['probe']}: {outcome['base']}"
    assert outcome["stop"] == 0, f"{name}: did not stop cleanly on stdin close"


# every compliant variant complies ------------------------------------------------------
@pytest.mark.parametrize("name", COMPLIANT_NAMES)
def test_compliant_variant(compliant_outcomes: dict[str, dict[str, Any]], name: str) -> None:
    outcome = compliant_outcomes[name]
    assert not outcome["failures"], f"{name}: " + " | ".join(outcome["failures"])
    assert outcome["stop"] == 0
