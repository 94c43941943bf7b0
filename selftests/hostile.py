"""Deliberately hostile HTTP servers on 127.0.0.1 for the hostile-target self-test.

Each is a raw socket server in a daemon thread with one behaviour per connection.  Every loop
is bounded (accept polls, a lifetime, byte caps) and the server stops itself after ``lifetime``
seconds even if nobody stops it.
"""

from __future__ import annotations

import itertools
import socket
import struct
import threading
import time
from collections.abc import Callable
from types import TracebackType

Handler = Callable[["HostileServer", socket.socket, bytes], None]
LIFETIME = 120.0
MAX_REQUEST = 1_000_000


def free_port() -> int:
    """A loopback port with nothing listening on it (connections are refused)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class HostileServer:
    """Accepts connections on 127.0.0.1 and lets ``handler`` misbehave on each request."""

    def __init__(self, handler: Handler, lifetime: float = LIFETIME) -> None:
        self.handler = handler
        self.stopping = threading.Event()
        self.deadline = time.monotonic() + lifetime
        self.requests: list[bytes] = []  # the head of every request received
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.2)
        self.port = int(self.listener.getsockname()[1])
        self.thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def live(self) -> bool:
        return not self.stopping.is_set() and time.monotonic() < self.deadline

    def _serve(self) -> None:
        with self.listener:
            while self.live():
                try:
                    conn, _ = self.listener.accept()
                except TimeoutError:
                    continue
                threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(5)
            try:
                head = read_request(conn)
                if not head:
                    return  # closed before any request came: no request (a run may open a connection it never uses)
                self.requests.append(head)
                self.handler(self, conn, head)
            except OSError:
                pass  # the client gave up: that is what hostile servers are for

    def start(self) -> HostileServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join(timeout=5)

    def __enter__(self) -> HostileServer:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()


def read_request(conn: socket.socket) -> bytes:
    """The request head, and its body when it has a Content-Length (bounded)."""
    data = b""
    while b"\r\n\r\n" not in data and len(data) < MAX_REQUEST:
        chunk = conn.recv(65536)
        if not chunk:
            break
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = _content_length(head)
    while len(body) < min(length, MAX_REQUEST):
        chunk = conn.recv(65536)
        if not chunk:
            break
        body += chunk
    return head


def _content_length(head: bytes) -> int:
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length" and value.strip().isdigit():
            return int(value.strip())
    return 0


def response_head(status: str, headers: dict[str, str]) -> bytes:
    lines = [f"HTTP/1.1 {status}", *(f"{k}: {v}" for k, v in headers.items()), "", ""]
    return "\r\n".join(lines).encode()


# -- behaviours -----------------------------------------------------------------------------------


def silent(server: HostileServer, conn: socket.socket, head: bytes) -> None:
    """Accepts, reads the request, never answers (until the server stops)."""
    while server.live():
        server.stopping.wait(0.2)


def trickle(server: HostileServer, conn: socket.socket, head: bytes) -> None:
    """Answers at once, then sends a JSON body one byte every 0.2 s (it would take minutes)."""
    body = b"[" + b" " * 5000 + b"]"
    conn.sendall(response_head("200 OK", {"Content-Type": "application/json", "Content-Length": str(len(body))}))
    for byte in body:
        if not server.live():
            return
        conn.sendall(bytes([byte]))
        time.sleep(0.2)


def reset_mid_body(server: HostileServer, conn: socket.socket, head: bytes) -> None:
    """Announces 1000 bytes, sends 20, then resets the connection (RST, not FIN)."""
    conn.sendall(response_head("200 OK", {"Content-Type": "application/json", "Content-Length": "1000"}))
    conn.sendall(b'[{"id": 1, "name": "R')
    time.sleep(0.05)
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


def reset_at_once(server: HostileServer, conn: socket.socket, head: bytes) -> None:
    """Reads the request, then resets the connection (RST) without a byte of answer."""
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


def not_json(server: HostileServer, conn: socket.socket, head: bytes) -> None:
    """A 200 HTML page for every request (a login portal, a proxy's error page...)."""
    body = b"<html><body><h1>Welcome to the gateway</h1></body></html>"
    headers = {"Content-Type": "text/html", "Content-Length": str(len(body)), "Connection": "close"}
    conn.sendall(response_head("200 OK", headers) + body)


def html_list(server: HostileServer, conn: socket.socket, head: bytes) -> None:
    """The Pet Store's Error for every request but the list, which is a 200 HTML page (a broken service)."""
    path = head.split(b" ", 2)[1].split(b"?", 1)[0]
    if path.rstrip(b"/") == b"/v1/pets":
        not_json(server, conn, head)
        return
    body = b'{"code": 404, "message": "no such animal", "status": 404}'
    headers = {"Content-Type": "application/json", "Content-Length": str(len(body)), "Connection": "close"}
    conn.sendall(response_head("404 Not Found", headers) + body)


def refuses_after_a_5xx() -> Handler:
    """The document's Error for every request: a 503 to the first (the pre-flight sees a service), then a
    401 with a Bearer challenge to every other, the valid key included (a key the service does not know)."""
    answered = itertools.count()

    def handler(server: HostileServer, conn: socket.socket, head: bytes) -> None:
        status = 503 if next(answered) == 0 else 401
        body = f'{{"code": "refused", "message": "refused", "status": {status}}}'.encode()
        headers = {"Content-Type": "application/json", "Content-Length": str(len(body)), "Connection": "close"}
        headers["WWW-Authenticate"] = 'Bearer realm="pets"'
        conn.sendall(response_head("503 Service Unavailable" if status == 503 else "401 Unauthorized", headers) + body)

    return handler


def other_json_api(server: HostileServer, conn: socket.socket, head: bytes) -> None:
    """Another JSON service at the base URL (a web framework's default 404 for every route it lacks)."""
    body = b'{"detail": "Not Found"}'
    headers = {"Content-Type": "application/json", "Content-Length": str(len(body)), "Connection": "close"}
    conn.sendall(response_head("404 Not Found", headers) + body)


def endless(server: HostileServer, conn: socket.socket, head: bytes) -> None:
    """Answers 200 and sends JSON-looking bytes with no length, until the client hangs up (or 1 GB)."""
    conn.sendall(response_head("200 OK", {"Content-Type": "application/json", "Connection": "close"}))
    chunk = b'[{"id": 1, "name": "Rex"},' * 2000
    for _ in range(1_000_000_000 // len(chunk)):
        if not server.live():
            return
        conn.sendall(chunk)


def redirect_to(other_base_url: str) -> Handler:
    """307 to the same path on another origin (where a key must never go)."""

    def handler(server: HostileServer, conn: socket.socket, head: bytes) -> None:
        path = head.split(b" ", 2)[1].decode()
        location = other_base_url.rsplit("/v1", 1)[0] + path
        headers = {"Location": location, "Content-Length": "0", "Connection": "close"}
        conn.sendall(response_head("307 Temporary Redirect", headers))

    return handler


def empty_list(server: HostileServer, conn: socket.socket, head: bytes) -> None:
    """The "other host": answers every request with an empty JSON list (and records it)."""
    body = b"[]"
    headers = {"Content-Type": "application/json", "Content-Length": str(len(body)), "Connection": "close"}
    conn.sendall(response_head("200 OK", headers) + body)


def has_authorization(head: bytes) -> bool:
    return any(line.lower().startswith(b"authorization:") for line in head.split(b"\r\n")[1:])
