"""A web server run in the foreground from a generated config in a temporary folder, on a free loopback port.

What ``apache.py``, ``nginx.py`` and ``lighttpd.py`` share: the folder (its pid, logs and temp paths; made
by ``worker_files.folder`` where workers dropped to ``nobody`` when run as root reach the error pages in it,
whatever folder the checkout is in), the port (probed
free, retried when another process takes it between the probe and the server's bind), the wait until it
listens, the stop (SIGTERM, then SIGKILL) and the folder's removal.  No system service is touched.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import worker_files


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def installed(name: str) -> str | None:
    """The server's binary, on the PATH or in /usr/sbin (Debian's packages put it there; a non-root PATH
    often lacks it)."""
    found = shutil.which(name)
    if found:
        return found
    candidate = f"/usr/sbin/{name}"
    return candidate if os.access(candidate, os.X_OK) else None


class ForegroundServer:
    """``binary`` with ``argv(config_path)`` run from ``write_config(folder, port)`` (the path of the config it
    wrote) and ``env(folder)`` added to this process's environment; it is up when its port accepts a
    connection.  ``name`` names it in errors (its Debian package)."""

    def __init__(
        self,
        name: str,
        binary: str | None,
        write_config: Callable[[Path, int], Path],
        argv: Callable[[Path], list[str]],
        env: Callable[[Path], dict[str, str]] | None = None,
    ) -> None:
        if binary is None:
            raise OSError(f"{name} is not installed (Debian: apt-get install {name})")
        self.name = name
        self.folder = worker_files.folder(f"webservers-{name}-")
        self.process: subprocess.Popen[bytes] | None = None
        for _attempt in range(5):
            self.port = free_port()
            conf = write_config(self.folder, self.port)
            # stderr to a file, never a pipe nobody reads (a chatty server would block on a full one)
            with (self.folder / "stderr.log").open("ab") as stderr:
                self.process = subprocess.Popen(
                    [binary, *argv(conf)],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=stderr,
                    env={**os.environ, **(env(self.folder) if env else {})},
                )
            if self._listening():
                return
            self.stop(keep_folder=True)
        problem = self._last_log_line()
        self.stop()
        raise OSError(f"{name} did not start: {problem}")

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _last_log_line(self) -> str:
        lines: list[str] = []
        for log in (self.folder / "error.log", self.folder / "stderr.log"):
            if log.exists():
                lines += log.read_text(errors="replace")[-300:].strip().splitlines()
        return lines[-1] if lines else "no log"

    def _listening(self) -> bool:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                return False
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                return True
            time.sleep(0.05)
        return False

    def stop(self, keep_folder: bool = False) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)  # each server's own orderly stop of its workers
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None
        if not keep_folder:
            shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> ForegroundServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
