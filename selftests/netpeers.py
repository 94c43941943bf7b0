"""Loopback network peers for the transport's self-tests: a scriptable HTTP(S) server and a forward proxy.

Everything listens on 127.0.0.1 only, every socket has a timeout, and both servers record what
reached them (requests, headers, connections, tunnelled bytes) so a test can check what was, and
what was not, sent.
"""

from __future__ import annotations

import selectors
import socket
import socketserver
import ssl
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

SOCKET_TIMEOUT = 5.0


def free_port() -> int:
    """A loopback port with nothing listening on it (connections are refused)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Seen:
    """One request as the server received it."""

    method: str
    path: str
    headers: dict[str, str]  # names in lower case
    body: bytes
    connection: int  # 1, 2, ... in the order connections were accepted
    nth: int  # 1 for the first request on its connection, 2 for the second...


# status, headers, body (bytes, or chunks written one by one); None: close the connection without answering.
Reply = tuple[int, dict[str, str], bytes | Iterable[bytes]] | None
Respond = Callable[[Seen], Reply]


def json_ok(seen: Seen) -> Reply:
    return 200, {"Content-Type": "application/json"}, b"[]"


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, peer: PeerServer) -> None:
        self.peer = peer
        super().__init__(("127.0.0.1", 0), _Handler)

    def get_request(self) -> tuple[Any, Any]:
        sock, address = super().get_request()
        sock.settimeout(SOCKET_TIMEOUT)
        if self.peer.tls is not None:  # the handshake happens in the handler's thread, on first read
            sock = self.peer.tls.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        return sock, address

    def process_request(self, request: Any, client_address: Any) -> None:
        with self.peer.lock:
            self.peer.connections += 1
            self.peer.numbers[id(request)] = self.peer.connections
        super().process_request(request, client_address)

    def handle_error(self, request: Any, client_address: Any) -> None:
        with self.peer.lock:
            self.peer.errors += 1  # a failed TLS handshake, a client that went away...


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # otherwise Nagle + delayed ACK add ~40 ms per keep-alive answer
    timeout = SOCKET_TIMEOUT
    server: _Server

    def setup(self) -> None:
        super().setup()
        peer = self.server.peer
        with peer.lock:
            self.connection_number = peer.numbers.pop(id(self.request), 0)
        self.count = 0

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _serve(self) -> None:
        peer = self.server.peer
        self.count += 1
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        seen = Seen(
            method=self.command,
            path=self.path,
            headers={name.lower(): value for name, value in self.headers.items()},
            body=body,
            connection=self.connection_number,
            nth=self.count,
        )
        with peer.lock:
            peer.requests.append(seen)
        if peer.delay:
            time.sleep(peer.delay)
        reply = peer.respond(seen)
        if reply is None:
            self.close_connection = True
            return
        status, headers, payload = reply
        self.send_response(status)
        names = {name.lower() for name in headers}
        for name, value in headers.items():
            self.send_header(name, value)
        if isinstance(payload, bytes):
            if "content-length" not in names:
                self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(payload)
            return
        if "content-length" not in names:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        for chunk in payload:
            self.wfile.write(chunk)
            self.wfile.flush()

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _serve


class PeerServer:
    """An HTTP/1.1 server (keep-alive; HTTPS with ``tls``) answering with ``respond(seen)``."""

    def __init__(self, respond: Respond = json_ok, *, tls: ssl.SSLContext | None = None, delay: float = 0.0) -> None:
        self.respond = respond
        self.tls = tls
        self.delay = delay
        self.lock = threading.Lock()
        self.requests: list[Seen] = []
        self.connections = 0
        self.numbers: dict[int, int] = {}
        self.errors = 0
        self.httpd = _Server(self)
        self.port = int(self.httpd.server_address[1])
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def origin(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return self.origin + "/v1"

    def start(self) -> PeerServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)

    def __enter__(self) -> PeerServer:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()


# -- a forward proxy -------------------------------------------------------------------------------


@dataclass
class ProxySeen:
    method: str  # CONNECT for a tunnel
    target: str  # host:port for CONNECT, the absolute URL otherwise
    headers: dict[str, str]  # names in lower case


@dataclass
class _ProxyState:
    hosts: dict[str, int]
    lock: threading.Lock = field(default_factory=threading.Lock)
    seen: list[ProxySeen] = field(default_factory=list)
    tunnelled: bytearray = field(default_factory=bytearray)  # every byte the client sent through a tunnel


class _ProxyHandler(socketserver.StreamRequestHandler):
    rbufsize = 0  # nothing the client sends after the head may sit in a buffer (the TLS hello of a tunnel)
    timeout = SOCKET_TIMEOUT
    server: _ProxyServer

    def handle(self) -> None:
        state = self.server.state
        request_line = self.rfile.readline(65537).decode("latin-1").strip()
        headers: dict[str, str] = {}
        raw_headers: list[tuple[str, str]] = []
        while True:
            line = self.rfile.readline(65537).decode("latin-1")
            if line in ("\r\n", "\n", ""):
                break
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
            raw_headers.append((name.strip(), value.strip()))
        method, target, _ = [*request_line.split(" ", 2), "", ""][:3]
        with state.lock:
            state.seen.append(ProxySeen(method, target, headers))
        if method == "CONNECT":
            self._tunnel(target)
        else:
            self._forward(method, target, raw_headers, headers)

    def _upstream(self, host: str) -> socket.socket | None:
        port = self.server.state.hosts.get(host.lower())
        if port is None:
            self.wfile.write(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            return None
        return socket.create_connection(("127.0.0.1", port), timeout=SOCKET_TIMEOUT)

    def _tunnel(self, target: str) -> None:
        upstream = self._upstream(target.rsplit(":", 1)[0])
        if upstream is None:
            return
        self.wfile.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        client = self.connection
        with upstream, selectors.DefaultSelector() as selector:
            selector.register(client, selectors.EVENT_READ, upstream)
            selector.register(upstream, selectors.EVENT_READ, client)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                for key, _ in selector.select(timeout=0.5):
                    data = key.fileobj.recv(65536)  # type: ignore[union-attr]
                    if not data:
                        return
                    if key.fileobj is client:
                        with self.server.state.lock:
                            self.server.state.tunnelled += data
                    key.data.sendall(data)

    def _forward(self, method: str, target: str, raw_headers: list[tuple[str, str]], headers: dict[str, str]) -> None:
        parts = urlsplit(target)
        length = int(headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        upstream = self._upstream(parts.hostname or "")
        if upstream is None:
            return
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        kept = [(n, v) for n, v in raw_headers if n.lower() not in ("connection", "proxy-connection", "keep-alive")]
        head = [f"{method} {path} HTTP/1.1", *(f"{n}: {v}" for n, v in kept), "Connection: close", "", ""]
        with upstream:
            upstream.sendall("\r\n".join(head).encode("latin-1") + body)
            answer = b""
            while chunk := upstream.recv(65536):
                answer += chunk
        answer_head, _, answer_body = answer.partition(b"\r\n\r\n")
        lines = [line for line in answer_head.split(b"\r\n") if not line.lower().startswith(b"connection:")]
        self.wfile.write(b"\r\n".join([*lines, b"Connection: close", b"", b""]) + answer_body)


class _ProxyServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True

    def __init__(self, state: _ProxyState) -> None:
        self.state = state
        super().__init__(("127.0.0.1", 0), _ProxyHandler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass


class ForwardProxy:
    """An HTTP proxy on 127.0.0.1: plain forwarding for http, CONNECT tunnels for https.

    ``hosts`` maps the names only the proxy can resolve (``petstore.test``) to loopback ports.
    """

    def __init__(self, hosts: dict[str, int]) -> None:
        self.state = _ProxyState({name.lower(): port for name, port in hosts.items()})
        self.server = _ProxyServer(self.state)
        self.port = int(self.server.server_address[1])
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def seen(self) -> list[ProxySeen]:
        with self.state.lock:
            return list(self.state.seen)

    @property
    def tunnelled(self) -> bytes:
        with self.state.lock:
            return bytes(self.state.tunnelled)

    def start(self) -> ForwardProxy:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)

    def __enter__(self) -> ForwardProxy:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()
