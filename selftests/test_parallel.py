"""Parallel and repeatable: ``-n 2`` gives the serial verdict; one seed sends the same requests.

Each run gets a fresh server, so that runs cannot see each other's animals.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import pytest

from petstore_contract.reference import BackgroundServer, build_app
from petstore_contract.selfcheck import ROOT, SuiteRun, run_suite

KEY = "parallel-selftest-key-4d9b0e"
QUICK = ("--contract-profile", "quick")
FAULT = "list_ignores_limit"
GENERATED = ROOT / "tests" / "test_generated.py"

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


def suite_on_fresh_server(*args: str, fault: str | None = None) -> SuiteRun:
    with BackgroundServer(build_app(KEY, fault=fault)) as server:
        return run_suite(server.base_url, KEY, *QUICK, *args)


def verdict(run: SuiteRun) -> tuple[int, frozenset[str], int]:
    return run.exit_code, frozenset(run.failed), run.passed + len(run.failed) + run.skipped


@pytest.mark.parametrize("fault", [None, FAULT], ids=["reference", FAULT])
def test_xdist_gives_the_serial_verdict(fault: str | None) -> None:
    serial = suite_on_fresh_server(fault=fault)
    parallel = suite_on_fresh_server("-n", "2", fault=fault)
    assert "gw0" in parallel.output or "bringing up nodes" in parallel.output, "xdist did not start"
    assert verdict(parallel) == verdict(serial), (sorted(serial.failed), sorted(parallel.failed))
    if fault is None:
        assert serial.exit_code == 0 and not serial.failed
    else:
        assert serial.exit_code == 1 and serial.failed, "the fault server must fail both ways"


# -- the same seed sends the same generated requests ----------------------------------------------


class RequestLog:
    """ASGI wrapper: records method, path, query and body of every request, then serves it."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.lines: list[str] = []

    async def __call__(self, scope: Message, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        messages: list[Message] = []
        while not messages or messages[-1].get("more_body", False):
            messages.append(await receive())
        body = b"".join(m.get("body", b"") for m in messages)
        self.lines.append(f"{scope['method']} {scope['path']}?{scope['query_string'].decode()} {body!r}")

        async def replay() -> Message:
            return messages.pop(0) if messages else await receive()

        await self.app(scope, replay, send)


def generated_requests(*args: str) -> list[str]:
    logged = RequestLog(build_app(KEY))
    with BackgroundServer(logged) as server:  # type: ignore[arg-type]
        run = run_suite(server.base_url, KEY, *QUICK, *args, "-m", "generated", "-k", "not sequences")
    assert run.exit_code == 0, run.output[-3000:]
    assert len(logged.lines) > 50
    return logged.lines


def test_same_seed_sends_the_same_generated_requests() -> None:
    if not GENERATED.exists():
        pytest.skip("tests/test_generated.py is not there yet: nothing generated to compare")
    first = generated_requests("--contract-seed", "4242")
    second = generated_requests("--contract-seed", "4242")
    assert first == second, next(f"{a} != {b}" for a, b in zip(first, second, strict=False) if a != b)
    other = generated_requests("--contract-seed", "4243")
    assert other != first, "another seed should send other requests (else the comparison proves nothing)"
