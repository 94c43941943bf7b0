"""Hostile answers end in a verdict on the target, never in an error of the suite.

The reference server behind a rewriting middleware sends what crashed checks once (a Deprecation
date beyond the years Python's datetime holds, a Basic challenge on the 401), or what was called
undecided instead of a violation (a 5xx to one valid create), or is run with a 1-character key.
Each run must end with its verdict, the expected clause violated, and zero errors of the suite.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

import pytest

from devtools import SuiteRun
from devtools.killmatrix import suite_errors
from gatekit import QUICK
from hosted import run_hosted
from petstore_contract.reference import BackgroundServer, build_app

KEY = "hostile-answers-key-0123456789"
Message = MutableMapping[str, Any]
Send = Callable[[Message], Awaitable[None]]
Rewrite = Callable[[str, str, int, list[tuple[bytes, bytes]]], tuple[int, list[tuple[bytes, bytes]]]]


@dataclass
class Rewriting:
    """ASGI middleware: ``rewrite(method, path, status, headers)`` gives each answer's status and headers."""

    app: Any
    rewrite: Rewrite

    async def __call__(self, scope: MutableMapping[str, Any], receive: Any, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def rewritten(message: Message) -> None:
            if message["type"] == "http.response.start":
                status, head = self.rewrite(scope["method"], scope["path"], message["status"], list(message["headers"]))
                message = {**message, "status": status, "headers": head}
            await send(message)

        await self.app(scope, receive, rewritten)


def _replace(head: list[tuple[bytes, bytes]], name: bytes, value: bytes) -> list[tuple[bytes, bytes]]:
    return [(k, v) for k, v in head if k.lower() != name] + [(name, value)]


def far_deprecation(method: str, path: str, status: int, head: list[tuple[bytes, bytes]]) -> tuple[int, Any]:
    if method == "GET" and path.startswith("/v1/pets/") and status == 200:
        return status, _replace(head, b"deprecation", b"@1735689600000")  # the year 56971
    return status, head


def basic_challenge(method: str, path: str, status: int, head: list[tuple[bytes, bytes]]) -> tuple[int, Any]:
    if status == 401:
        return status, _replace(head, b"www-authenticate", b'Basic realm="petstore"')
    return status, head


def run_behind(rewrite: Rewrite, key: str = KEY) -> SuiteRun:
    with BackgroundServer(Rewriting(build_app(key), rewrite)) as server:  # type: ignore[arg-type]
        return run_hosted(server.base_url, key, *QUICK, timeout=300)


@pytest.mark.parametrize(
    ("rewrite", "clause"),
    [pytest.param(far_deprecation, "read.sunset", marks=pytest.mark.tier_2), (basic_challenge, "auth.challenge")],
    ids=["deprecation-in-year-56971", "basic-challenge-on-401"],
)
def test_values_that_crashed_checks_are_findings(rewrite: Rewrite, clause: str) -> None:
    run = run_behind(rewrite)
    assert suite_errors(run) == 0, run.output[-3000:]
    assert run.verdict == "not_conformant" and clause in run.violated(), (run.verdict, sorted(run.violated()))


class FirstCreateFails:
    """The first valid POST /pets (the first 201) answers 500 instead; every other answer is the reference's."""

    def __init__(self) -> None:
        self.done = False

    def __call__(self, method: str, path: str, status: int, head: list[tuple[bytes, bytes]]) -> tuple[int, Any]:
        if method == "POST" and status == 201 and not self.done:
            self.done = True
            return 500, head
        return status, head


def test_a_5xx_to_one_valid_create_is_a_violation() -> None:
    run = run_behind(FirstCreateFails())
    assert suite_errors(run) == 0, run.output[-3000:]
    assert run.verdict == "not_conformant", (run.verdict, run.summary["reason"])
    evidence = [f for f in run.findings() if f["exchange"] and f["exchange"]["status"] == 500]
    assert evidence and evidence[0]["exchange"]["method"] == "POST", run.findings()
    assert {f["clause"] for f in evidence} <= {"responses.documented", "create.created"}, evidence


def _unchanged(method: str, path: str, status: int, head: list[tuple[bytes, bytes]]) -> tuple[int, Any]:
    return status, head


@pytest.mark.parametrize("key", ["k", *(pytest.param(k, marks=pytest.mark.tier_2) for k in ("7", "-"))])
def test_a_conformant_server_passes_with_a_one_character_key(key: str) -> None:
    run = run_behind(_unchanged, key=key)
    assert suite_errors(run) == 0, run.output[-3000:]
    assert run.verdict == "conformant", (run.summary["reason"], [f["observed"] for f in run.findings()][:5])
