"""Self-proof of round 3: every server starts and honours the basics, answers its declared silent-area
choices with the Error body, every fault shows its framework's own page where its base sends the Error
body, and the harness keeps the blind catalogs' command line.

Run from the repository root: ``.venv/bin/pytest selftests/blind3`` (the ``pytest.ini`` here makes this
folder its own rootdir). One server per entry, started side by side; about 20 s on 2 cores.
nginx (Debian's ``nginx-light``) must be installed: ``.ci/run`` installs it.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent


def load(name: str) -> ModuleType:
    """This folder's module under a name of its own: round 2's self-proof, collected in the same process
    by ``pytest selftests``, puts its own ``catalog`` and ``probes`` on ``sys.path``."""
    spec = importlib.util.spec_from_file_location(f"blind3_{name}", HERE / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


catalog, probes, nginx = load("catalog"), load("probes"), load("nginx")

SERVER = HERE / "server.py"
KEY = "blind3-Key_0123456789abcdef"
ENV = {**os.environ, "PETSTORE_API_KEY": KEY}
START_TIMEOUT = 60
WORKERS = 4


class Server:
    """One ``server.py`` process; its base URL is its first stdout line."""

    def __init__(self, variant: str, preload: int = 0) -> None:
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
        self.url = (self.proc.stdout.readline().decode().strip() if self.proc.stdout else "") or None
        self.ready.set()

    def base(self) -> str:
        assert self.ready.wait(START_TIMEOUT), f"{self.variant}: no URL in {START_TIMEOUT}s"
        err = self.proc.stderr.read()[-300:] if not self.url and self.proc.stderr else b""
        assert self.url and re.fullmatch(r"http://127\.0\.0\.1:[0-9]+/v1", self.url), (
            f"{self.variant}: first line {self.url!r}, stderr {err!r}"
        )
        return self.url

    def client(self) -> Any:  # probes.Client
        return probes.Client(self.base(), KEY)

    def stop(self) -> int:
        """Close stdin: the server (nginx included) must stop by itself."""
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            return self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
            return -999


def port_closed(url: str) -> bool:
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    except OSError:
        return True
    return False


def exercise(entry: dict[str, Any]) -> dict[str, Any]:
    """Start the entry's server; run the basics and every silent-area probe; stop it by closing stdin."""
    outcome: dict[str, Any] = {"basics": None, "answers": {}, "stop": None, "closed": None}
    server = Server(entry["name"], catalog.CROWDED_PRELOAD if entry["store"] == "crowded" else 0)
    try:
        client = server.client()
        try:
            probes.basics(client)
        except AssertionError as exc:
            outcome["basics"] = str(exc)[:400]
        for name, probe in probes.SILENT.items():
            outcome["answers"][name] = probe(client)
    finally:
        outcome["stop"] = server.stop()
        outcome["closed"] = server.url is not None and port_closed(server.url)
    return outcome


@pytest.fixture(scope="session")
def outcomes() -> dict[str, dict[str, Any]]:
    assert nginx.binary(), "nginx is not installed (apt-get install nginx-light; .ci/run installs it)"
    with ThreadPoolExecutor(WORKERS) as workers:
        futures = {e["name"]: workers.submit(exercise, e) for e in catalog.ENTRIES}
        return {name: future.result() for name, future in futures.items()}


COMPLIANT_NAMES = [e["name"] for e in catalog.COMPLIANT]
FAULT_NAMES = [e["name"] for e in catalog.FAULTS]


# the catalog -------------------------------------------------------------------------------------
def test_catalog_shape() -> None:
    names = [e["name"] for e in catalog.ENTRIES]
    assert len(names) == len(set(names))
    assert len(catalog.COMPLIANT) >= 6 and len({e["framework"] for e in catalog.COMPLIANT}) >= 5
    assert len(catalog.FAULTS) >= 3 and any(e["proxy"] == "nginx" for e in catalog.COMPLIANT)
    for entry in catalog.ENTRIES:
        assert entry["kind"] in ("fault", "compliant") and entry["store"] in ("empty", "crowded")
        assert entry["quote"] and entry["description"] and (HERE / f"{entry['framework']}_app.py").exists()
        source = (HERE / f"{entry['framework']}_app.py").read_text() + (HERE / "nginx.py").read_text()
        for flag in entry["flags"]:
            assert f'"{flag}"' in source, f"{entry['name']}: flag {flag} is used nowhere"
        if entry["kind"] == "compliant":
            assert set(entry["choices"]) == set(probes.SILENT), entry["name"]
        else:
            assert entry["probe"] in probes.SILENT and entry["shows"] in ("html", "text", "json") and entry["flags"]
    # the round covers each silent-area answer the issue asks for
    chosen = {(probe, status) for e in catalog.COMPLIANT for probe, status in e["choices"].items()}
    for wanted in [("text_body", 415), ("big_body", 413), ("html_only", 406), ("malformed_id_no_key", 404)]:
        assert wanted in chosen, wanted
    assert ("limit_zero", 422) in chosen and ("limit_zero", 400) in chosen and ("delete", 405) in chosen


def test_list_prints_the_catalog() -> None:
    env = {k: v for k, v in ENV.items() if k != "PETSTORE_API_KEY"}
    out = subprocess.run([sys.executable, str(SERVER), "--list"], capture_output=True, env=env, timeout=30, check=True)
    rows = [json.loads(line) for line in out.stdout.decode().splitlines()]
    assert [r["name"] for r in rows] == [e["name"] for e in catalog.ENTRIES]
    assert all(set(r) == {"name", "kind", "quote", "description", "store"} for r in rows)


@pytest.mark.parametrize(
    "args, env",
    [
        (["--variant", "aiohttp"], {k: v for k, v in ENV.items() if k != "PETSTORE_API_KEY"}),
        (["--variant", "no_such_variant"], ENV),
        (["--variant", "aiohttp", "--port", "x"], ENV),
        (["--variant", "aiohttp", "--bogus"], ENV),
        ([], ENV),
    ],
)
def test_harness_errors_exit_2(args: list[str], env: dict[str, str]) -> None:
    done = subprocess.run(
        [sys.executable, str(SERVER), *args], capture_output=True, env=env, stdin=subprocess.DEVNULL, timeout=30
    )
    assert done.returncode == 2 and done.stdout == b""
    assert len(done.stderr.decode().strip().splitlines()) == 1


@pytest.mark.parametrize("variant", ["bottle_nginx", "django_waitress"])
def test_sigterm_stops(variant: str) -> None:
    server = Server(variant, 3)
    assert server.client().call("GET", "/pets").status_code == 200
    server.proc.send_signal(signal.SIGTERM)
    assert server.proc.wait(15) == 0
    assert port_closed(server.base()), "the port (nginx's, for bottle_nginx) still answers after SIGTERM"
    assert server.stop() == 0


# every compliant server honours the basics and its declared choices ------------------------------
@pytest.mark.parametrize("name", COMPLIANT_NAMES)
def test_compliant_server(outcomes: dict[str, dict[str, Any]], name: str) -> None:
    outcome, entry = outcomes[name], catalog.BY_NAME[name]
    assert outcome["basics"] is None, f"{name}: {outcome['basics']}"
    problems = [probes.silent_problem(p, outcome["answers"][p], status) for p, status in entry["choices"].items()]
    assert [p for p in problems if p] == []
    assert outcome["stop"] == 0 and outcome["closed"], f"{name}: did not stop cleanly on stdin close"


# every fault shows its framework's page where its base sends the Error body -----------------------
@pytest.mark.parametrize("name", FAULT_NAMES)
def test_fault_shown(outcomes: dict[str, dict[str, Any]], name: str) -> None:
    entry = catalog.BY_NAME[name]
    fault, base = outcomes[name]["answers"][entry["probe"]], outcomes[entry["base"]]["answers"][entry["probe"]]
    assert fault.status_code == base.status_code >= 400, (fault.status_code, base.status_code)
    assert probes.shows(base) == "error", f"{entry['base']}: {base.text[:200]!r}"
    assert probes.shows(fault) == entry["shows"], f"{name}: {fault.headers.get('Content-Type')} {fault.text[:200]!r}"
    print(f"{name}: {entry['probe']} -> {fault.status_code} {fault.headers.get('Content-Type')} {fault.text[:60]!r}")
    assert outcomes[name]["basics"] is None, f"{name}: {outcomes[name]['basics']}"
    assert outcomes[name]["stop"] == 0 and outcomes[name]["closed"]
