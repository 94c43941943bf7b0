"""Run a Pet Store app on a loopback port, in a background thread or in the foreground."""

from __future__ import annotations

import threading
from types import TracebackType

import uvicorn
from starlette.applications import Starlette

from petstore_contract.reference.sockets import bind_loopback

__all__ = ["BackgroundServer", "bind_loopback", "quiet_config"]


def quiet_config(app: Starlette) -> uvicorn.Config:
    """How the suite's own servers run: no logs, no lifespan, connections kept for the run's pool."""
    return uvicorn.Config(app, log_level="critical", access_log=False, lifespan="off", timeout_keep_alive=30)


class BackgroundServer:
    """A uvicorn server in a daemon thread; ``base_url`` ends in /v1 like the deployments'."""

    def __init__(self, app: Starlette, host: str = "127.0.0.1", port: int = 0) -> None:
        self.app = app
        self.sock = bind_loopback(host, port)
        self.host, self.port = self.sock.getsockname()[:2]
        self.server = uvicorn.Server(quiet_config(app))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def start(self, timeout: float = 10.0) -> BackgroundServer:
        self.thread.start()
        waited = 0.0
        while not self.server.started:
            if not self.thread.is_alive() or waited > timeout:
                raise RuntimeError(f"the reference server did not start on {self.host}:{self.port}")
            threading.Event().wait(0.01)
            waited += 0.01
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=5)
        self.sock.close()

    def __enter__(self) -> BackgroundServer:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()
