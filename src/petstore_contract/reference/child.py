"""The embedded reference in a child process of the run, on a socket the run has already bound.

Why a process: in the run's own process the server's request handling competes with the client's
drawing and judging for one interpreter lock; in a process of its own it uses the other core.  The
parent binds and listens first, so the base URL is known at once and a request sent before the
child is up waits in the listen queue instead of being refused.

``python -m petstore_contract.reference.child FD`` serves the reference on the inherited
listening socket FD with the key in ``PETSTORE_API_KEY``, and exits when its stdin closes (the
run ended, or its process died): it never outlives the run.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading

from petstore_contract.reference.sockets import bind_loopback

KEY_ENV = "PETSTORE_API_KEY"
STOP_WAIT = 5.0


class ChildServer:
    """The parent's handle: ``base_url`` at once; ``problem()`` says why the child died, if it did."""

    def __init__(self, api_key: str, host: str = "127.0.0.1") -> None:
        self.sock = bind_loopback(host)
        self.host, self.port = self.sock.getsockname()[:2]
        fd = self.sock.fileno()
        command = [sys.executable, "-m", "petstore_contract.reference.child", str(fd)]
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,  # silent unless it fails to start (a traceback fits the pipe)
            pass_fds=(fd,),
            env={**os.environ, KEY_ENV: api_key},
        )

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def problem(self) -> str:
        """Why the child is gone, in one line ("" while it serves)."""
        if self.process.poll() is None:
            return ""
        output = self.process.stderr.read().decode("utf-8", "replace") if self.process.stderr else ""
        lines = output.strip().splitlines()
        last = lines[-1][:300] if lines else "no output"
        return f"the embedded reference server exited with code {self.process.returncode}: {last}"

    def stop(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()  # the child exits on its own when its stdin closes
        try:
            self.process.wait(timeout=STOP_WAIT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stderr is not None:
            self.process.stderr.close()
        self.sock.close()


def _exit_with_parent() -> None:
    while os.read(0, 1024):
        pass
    os._exit(0)  # end of file: the parent closed the pipe or died


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not argv[0].isdigit() or KEY_ENV not in os.environ:
        print(f"usage: {KEY_ENV}=... python -m petstore_contract.reference.child FD", file=sys.stderr)
        return 2
    # Imported here, in the child: the run's process only binds the socket (no server library).
    import uvicorn

    from petstore_contract.reference.asgi import build_app
    from petstore_contract.reference.server import quiet_config

    sock = socket.socket(fileno=int(argv[0]))
    threading.Thread(target=_exit_with_parent, daemon=True).start()
    uvicorn.Server(quiet_config(build_app(os.environ[KEY_ENV]))).run(sockets=[sock])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
