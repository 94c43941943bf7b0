"""A service that other clients write to while the run goes on: its races are not the service's faults.

The suite reads the store whole, then probes ids nobody had (the next ones among them).  On a busy
service another client can be handed such an id in between: the probe then answers 200 for an
animal that exists.  The ``busy`` variant with another client's animal added on the first probe to
arrive (the run's 6th request: the pre-flight, the four lists of the first look, then the probes)
makes that race happen every time.
"""

from __future__ import annotations

import dataclasses
import secrets
from typing import Any

from devtools.catalog import VARIANTS
from gatekit import QUICK
from hosted import run_hosted
from petstore_contract.reference import BackgroundServer, build_app


class ReadStatuses:
    """ASGI wrapper: the status of every GET /v1/pets/{id} answer, in order."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.seen: list[tuple[str, int]] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        async def watched(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start" and scope["path"].startswith("/v1/pets/"):
                self.seen.append((scope["path"], message["status"]))
            await send(message)

        await self.app(scope, receive, watched if scope["type"] == "http" else send)


def test_an_id_handed_to_another_client_between_look_and_probe_is_no_fault() -> None:
    key = "busy-" + secrets.token_urlsafe(12)
    variant = dataclasses.replace(VARIANTS["busy"], background_every=6)
    reads = ReadStatuses(build_app(key, variant))
    with BackgroundServer(reads) as server:  # type: ignore[arg-type]
        run = run_hosted(server.base_url, key, "-k", "test_unknown_ids_are_404_with_error", *QUICK, timeout=300)
    # The race happened: the first probe of the next id found another client's animal.
    assert ("/v1/pets/1", 200) in reads.seen[:5], reads.seen[:5]
    assert run.exit_code == 0, run.output[-2000:]
    assert "read.not-found" in run.clauses("conforms"), run.summary.get("clauses")
