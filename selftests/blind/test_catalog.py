"""Self-proof of the blind catalog: every fault is real and observable, every compliant variant is sane.

Each test starts real server processes (server.py) on free loopback ports with a
random key. A fault's demonstration (catalog data) must show the misbehaviour on
the fault's server and correct behaviour on the base "compliant" server.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import secrets
import select
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any

import pytest
import requests

HERE = Path(__file__).resolve().parent
SERVER = HERE / "server.py"
TIMEOUT = 30.0  # seconds, for every request and every wait on a process (a loaded CI machine starts slowly)


def _load_catalog() -> Any:
    # Loaded by path under a private name, so no other module called "catalog" can shadow it.
    spec = importlib.util.spec_from_file_location("blind_catalog", HERE / "catalog.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["blind_catalog"] = module
    spec.loader.exec_module(module)
    return module


catalog = _load_catalog()
FAULTS = [e for e in catalog.ENTRIES if e.kind == "fault"]
COMPLIANT = [e for e in catalog.ENTRIES if e.kind == "compliant"]
STATUSES = ("available", "pending", "sold")
INT64 = range(-(2**63), 2**63)
SUNSET_DATE = datetime(2030, 12, 5, tzinfo=UTC)
DAYS, MONTHS = "Mon|Tue|Wed|Thu|Fri|Sat|Sun", "Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec"
IMF_FIXDATE = re.compile(rf"({DAYS}), \d{{2}} ({MONTHS}) \d{{4}} \d{{2}}:\d{{2}}:\d{{2}} GMT")
INVALID = object()  # a body that is not strict UTF-8 JSON


# --- server processes ---
@dataclass
class Server:
    proc: subprocess.Popen[bytes]
    key: str
    base: str = ""


def launch(variant: str, preload: int = 0) -> Server:
    key = "pk_" + secrets.token_urlsafe(18)
    env = {**os.environ, "PETSTORE_API_KEY": key}
    cmd = [sys.executable, str(SERVER), "--variant", variant, "--port", "0", "--preload", str(preload)]
    pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    return Server(subprocess.Popen(cmd, env=env, **pipes), key)


def ready(server: Server) -> Server:
    """Wait for the first stdout line (the base URL)."""
    assert server.proc.stdout is not None
    readable, _, _ = select.select([server.proc.stdout], [], [], TIMEOUT)
    line = server.proc.stdout.readline().decode().strip() if readable else ""
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/v1", line), f"no base URL on stdout: {line!r}"
    server.base = line
    return server


def stop(server: Server) -> int:
    """Close stdin (the server's stop signal) and return its exit code; kill it if it lingers."""
    try:
        server.proc.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        server.proc.kill()
        server.proc.communicate()
        return -9
    return server.proc.returncode


def preload_for(entry: Any) -> int:
    return catalog.CROWDED_PRELOAD if entry.store == "crowded" else 0


# --- one demonstration: requests, then the properties of a correct answer ---
def send(server: Server, step: Any, bodies: list[Any]) -> requests.Response | None:
    def fill(template: str) -> str:
        return template.format(*bodies, key=server.key, KEY=server.key.upper())

    headers = {} if step.auth is None else {"Authorization": fill(step.auth)}
    data = step.raw
    if data is None and step.body is not catalog.ABSENT:
        data = json.dumps(step.body, ensure_ascii=False).encode("utf-8")
    if data is not None:
        headers["Content-Type"] = step.content_type
    try:
        url = server.base + fill(step.path)
        return requests.request(step.method, url, headers=headers, data=data, timeout=TIMEOUT)
    except (requests.RequestException, LookupError, TypeError):
        return None  # no answer (or no request could be built from the earlier answers)


def run_demo(server: Server, steps: tuple[Any, ...]) -> list[str]:
    """The properties the server failed, as readable lines (empty: all good)."""
    history: list[list[requests.Response | None]] = []
    failed = []
    for number, step in enumerate(steps):
        bodies = [decoded(answers[-1]) for answers in history]
        answers = [send(server, step, bodies) for _ in range(step.repeat)]
        history.append(answers)
        for check in step.expect:
            if not holds(check, answers, history):
                failed.append(f"step {number} {step.method} {step.path}: {check} ({summary(answers[-1])})")
    return failed


def holds(check: tuple[Any, ...], answers: list[Any], history: list[Any]) -> bool:
    try:
        return bool(CHECKS[check[0]](answers, history, *check[1:]))
    except (AttributeError, TypeError, KeyError, IndexError):
        return False  # an answer of the wrong shape does not have the property


def summary(answer: requests.Response | None) -> str:
    return "no answer" if answer is None else f"{answer.status_code} {answer.content[:120]!r}"


# --- properties of answers ---
def decoded(answer: requests.Response | None) -> Any:
    if answer is None:
        return INVALID
    try:
        return json.loads(answer.content.decode("utf-8"), parse_constant=_reject)
    except ValueError:
        return INVALID


def _reject(name: str) -> Any:
    raise ValueError(name)


def is_int64(value: Any) -> bool:
    return type(value) is int and value in INT64


def is_pet(value: Any) -> bool:
    if not isinstance(value, dict):
        return False
    typed = is_int64(value.get("id")) and isinstance(value.get("name"), str) and is_int64(value.get("categoryId"))
    return typed and ("status" not in value or value["status"] in STATUSES)


def media_json(answer: requests.Response) -> bool:
    return answer.headers.get("Content-Type", "").split(";")[0].strip().lower() == "application/json"


def is_error(answer: requests.Response) -> bool:
    body = decoded(answer)
    if not isinstance(body, dict) or not media_json(answer):
        return False
    typed = isinstance(body.get("code"), str) and isinstance(body.get("message"), str)
    return typed and type(body.get("status")) is int and body["status"] == answer.status_code


def bearer_challenge(answer: requests.Response) -> bool:
    value = answer.headers.get("WWW-Authenticate", "")
    return re.search(r"(^|,)\s*bearer(\s|,|$)", value, re.IGNORECASE) is not None


def same_value(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def same_pet(answer: requests.Response, history: list[Any], step: int) -> bool:
    got, want = decoded(answer), decoded(history[step][-1])
    if not (isinstance(got, dict) and isinstance(want, dict)):
        return False
    keys = ["id", "name", "categoryId"] + (["status"] if "status" in want else [])
    return all(same_value(got.get(k), want.get(k)) for k in keys)


def ids(answer: requests.Response) -> list[Any]:
    body = decoded(answer)
    return [p.get("id") for p in body if isinstance(p, dict)] if isinstance(body, list) else []


def deprecated_in_past(answer: requests.Response) -> bool:
    match = re.fullmatch(r"@(-?\d{1,15})", answer.headers.get("Deprecation", ""))
    return match is not None and int(match.group(1)) <= time.time()


def sunset_ok(answer: requests.Response) -> bool:
    value = answer.headers.get("Sunset")
    if value is None:
        return True  # RFC 8594: optional
    return IMF_FIXDATE.fullmatch(value) is not None and parsedate_to_datetime(value) == SUNSET_DATE


def length_at_most(answer: requests.Response, limit: int) -> bool:
    body = decoded(answer)
    return isinstance(body, list) and len(body) <= limit


def each(test: Callable[..., bool]) -> Callable[..., bool]:
    """A property every answer of the step must have (no answer fails it)."""
    return lambda answers, history, *args: all(a is not None and test(a, history, *args) for a in answers)


CHECKS: dict[str, Callable[..., bool]] = {
    "status": each(lambda a, h, code: a.status_code == code),
    "status_below": each(lambda a, h, code: a.status_code < code),
    "json": each(lambda a, h: decoded(a) is not INVALID),
    "json_array": each(lambda a, h: isinstance(decoded(a), list)),
    "json_object": each(lambda a, h: isinstance(decoded(a), dict)),
    "media_json": each(lambda a, h: media_json(a)),
    "error_body": each(lambda a, h: is_error(a)),
    "error_if_failed": each(lambda a, h: a.status_code < 400 or is_error(a)),
    "challenge": each(lambda a, h: bearer_challenge(a)),
    "pet": each(lambda a, h: is_pet(decoded(a))),
    "pets": each(lambda a, h: isinstance(decoded(a), list) and all(is_pet(p) for p in decoded(a))),
    "field": each(lambda a, h, name, value: isinstance(decoded(a), dict) and same_value(decoded(a).get(name), value)),
    "same_pet": each(same_pet),
    "len_le": each(lambda a, h, n: length_at_most(a, n)),
    "len_le_if_ok": each(lambda a, h, n: a.status_code != 200 or length_at_most(a, n)),
    "all_status": each(lambda a, h, s: isinstance(decoded(a), list) and all(p.get("status") == s for p in decoded(a))),
    "unique_ids": each(lambda a, h: len(ids(a)) == len(set(map(repr, ids(a))))),
    "len_ge": each(lambda a, h, n: isinstance(decoded(a), list) and len(decoded(a)) >= n),
    "deprecation_past": each(lambda a, h: deprecated_in_past(a)),
    "sunset_ok": each(lambda a, h: sunset_ok(a)),
    "header_absent": each(lambda a, h, name: name not in a.headers),
    "distinct": lambda answers, h, name: (
        None not in answers and len({repr(decoded(a).get(name)) for a in answers}) == len(answers)
    ),
}


def answers_list(server: Server) -> requests.Response:
    headers = {"Authorization": f"Bearer {server.key}"}
    return requests.get(server.base + "/pets", headers=headers, timeout=TIMEOUT)


# --- the catalog as data ---
def test_catalog_shape() -> None:
    names = [e.name for e in catalog.ENTRIES]
    assert len(names) == len(set(names)), "entry names must be unique"
    assert len(FAULTS) >= 48 and len(COMPLIANT) >= 12
    assert "compliant" in catalog.BY_NAME and not catalog.BY_NAME["compliant"].flags
    for entry in catalog.ENTRIES:
        assert entry.kind in ("fault", "compliant") and entry.store in ("any", "crowded"), entry.name
        assert entry.quote and entry.description and "\n" not in entry.description, entry.name
        assert (entry.kind == "fault") == bool(entry.demo), f"{entry.name}: faults, and only faults, carry a demo"
        assert all(check[0] in CHECKS for step in entry.demo for check in step.expect), entry.name


def test_every_flag_has_a_switch_in_the_server() -> None:
    source = SERVER.read_text()
    flags = {flag for entry in catalog.ENTRIES for flag in entry.flags}
    assert not [flag for flag in sorted(flags) if f'"{flag}"' not in source]


def test_compliant_variants_flags_are_not_fault_flags() -> None:
    fault_only = {f for e in FAULTS for f in e.flags} - {f for e in COMPLIANT for f in e.flags}
    for entry in FAULTS:
        assert entry.flags & fault_only, f"{entry.name} has no switch of its own"


# --- every fault is real: shown on its own fresh server, absent from the base ---
@pytest.fixture(scope="module")
def base_servers() -> Iterator[dict[int, Server]]:
    """One base server per store size, shared by all demonstrations (they hold on a used store)."""
    servers = {size: launch("compliant", size) for size in (0, catalog.CROWDED_PRELOAD)}
    try:
        yield {size: ready(server) for size, server in servers.items()}
    finally:
        codes = [stop(server) for server in servers.values()]
    assert codes == [0, 0], f"base servers did not stop cleanly: {codes}"


@pytest.mark.parametrize("entry", FAULTS, ids=lambda e: e.name)
def test_fault_is_observable(entry: Any, base_servers: dict[int, Server]) -> None:
    faulty = launch(entry.name, preload_for(entry))
    try:
        ready(faulty)
        first = answers_list(faulty)
        shown = run_demo(faulty, entry.demo)
    finally:
        code = stop(faulty)
    assert first.status_code not in (401, 403), "the server must accept its own key"
    assert shown, f"{entry.name}: the demonstration does not show the fault"
    assert code == 0, f"the server did not stop cleanly: {code}"
    base_failed = run_demo(base_servers[preload_for(entry)], entry.demo)
    assert not base_failed, f"{entry.name}: the base server fails the demonstration: {base_failed}"


# --- every compliant variant honours the basics (on a crowded store) ---
@pytest.mark.parametrize("entry", COMPLIANT, ids=lambda e: e.name)
def test_compliant_variant_is_sane(entry: Any) -> None:
    server = launch(entry.name, catalog.CROWDED_PRELOAD)
    try:
        ready(server)
        failed = run_demo(server, catalog.SANITY)
    finally:
        code = stop(server)
    assert not failed, f"{entry.name}: {failed}"
    assert code == 0


# --- optional, slower: the compliant variants also pass every demonstration ---
# unique_names is left out: demonstrations create "Rex" again and again, which it refuses (rightly).
CROSS = [e for e in COMPLIANT if e.name not in ("compliant", "unique_names")]


@pytest.mark.skipif(not os.environ.get("BLIND_CROSS"), reason="set BLIND_CROSS=1 for this slower cross-check")
@pytest.mark.parametrize("entry", CROSS, ids=lambda e: e.name)
def test_compliant_variant_passes_every_demo(entry: Any) -> None:
    servers = {size: launch(entry.name, size) for size in (0, catalog.CROWDED_PRELOAD)}
    try:
        ready(servers[0]), ready(servers[catalog.CROWDED_PRELOAD])
        failed = [f"{e.name}: {run_demo(servers[preload_for(e)], e.demo)}" for e in FAULTS]
    finally:
        codes = [stop(server) for server in servers.values()]
    assert not [line for line in failed if not line.endswith(": []")]
    assert codes == [0, 0]


# --- the base server survives odd requests (only deliberate faults misbehave) ---
ODD_BODIES: tuple[tuple[bytes, str], ...] = (
    (b"", "application/json"),
    (b"null", "application/json"),
    (b'"Rex"', "application/json"),
    (b"[1, 2]", "application/json"),
    (b"\xff\xfe{}", "application/json"),
    (b'{"name": "Rex", "categoryId": NaN}', "application/json"),
    (b'{"name": "\\ud800", "categoryId": 1}', "application/json"),
    (b'{"name": "Rex", "categoryId": 1' + b"0" * 5000 + b"}", "application/json"),
    (b"[" * 100000 + b"]" * 100000, "application/json"),
    (b'{"name": ["Rex"], "categoryId": {"a": 1}, "status": ["sold"]}', "application/json"),
    (b"<pet><name>Rex</name></pet>", "application/xml"),
)
ODD_PATHS = (
    "/pets?limit=",
    "/pets?limit=1e3",
    "/pets?limit=-1",
    "/pets?limit=%D9%A3",  # an Arabic-Indic digit three: not an integer on the wire
    "/pets?status=",
    "/pets?status=SOLD",
    "/pets/abc",
    "/pets/%D9%A3",
    "/pets/99999999999999999999",
)


def test_base_survives_odd_requests() -> None:
    server = ready(launch("compliant"))
    headers = {"Authorization": f"Bearer {server.key}"}
    try:
        for raw, ctype in ODD_BODIES:
            answer = requests.post(
                server.base + "/pets", data=raw, headers={**headers, "Content-Type": ctype}, timeout=TIMEOUT
            )
            assert answer.status_code == 400 and is_error(answer), (raw[:40], summary(answer))
        for path in ODD_PATHS:
            answer = requests.get(server.base + path, headers=headers, timeout=TIMEOUT)
            assert answer.status_code in (400, 404) and is_error(answer), (path, summary(answer))
        chunks = iter([b'{"name": "Chunky", ', b'"categoryId": 1}'])  # sent with Transfer-Encoding: chunked
        answer = requests.post(server.base + "/pets", data=chunks, headers=headers, timeout=TIMEOUT)
        assert answer.status_code == 201 and is_pet(decoded(answer)), summary(answer)
        assert answers_list(server).status_code == 200
    finally:
        assert stop(server) == 0


# --- the command line ---
def run_cli(*args: str, key: str | None = "k") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PETSTORE_API_KEY"}
    env.update({} if key is None else {"PETSTORE_API_KEY": key})
    cmd = [sys.executable, str(SERVER), *args]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL)


def test_list_prints_the_catalog_as_json_lines() -> None:
    done = run_cli("--list", key=None)
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert done.returncode == 0 and [r["name"] for r in rows] == [e.name for e in catalog.ENTRIES]
    assert {"name", "kind", "quote", "description", "store"} <= set(rows[0])


@pytest.mark.parametrize(
    "args, key",
    [
        (("--variant", "compliant"), None),
        (("--variant", "no_such_variant"), "k"),
        (("--variant", "compliant", "--port", "70000"), "k"),
        (("--variant", "compliant", "--preload", "-3"), "k"),
        (("--variant", "compliant", "--bogus"), "k"),
        ((), "k"),
    ],
    ids=["no-key", "unknown-variant", "bad-port", "bad-preload", "unknown-option", "no-variant"],
)
def test_bad_start_is_one_line_and_exit_2(args: tuple[str, ...], key: str | None) -> None:
    done = run_cli(*args, key=key)
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.splitlines()) == 1 and "Traceback" not in done.stderr


def test_server_stops_on_sigterm() -> None:
    server = ready(launch("compliant"))
    server.proc.terminate()
    try:
        assert server.proc.wait(timeout=TIMEOUT) == 0
    finally:
        stop(server)
