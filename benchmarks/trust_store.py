"""What a write on a new ``https`` connection costs the client in CPU, with a CA bundle of one certificate
and with one the size of certifi's (the default trust store: ``verify`` True), against a loopback TLS peer.

    python -m benchmarks.trust_store [--writes 50]

Each write goes out on a new connection (``transport/connections.py``); the run's TLS context holds the
trust store read once (``transport/tls.py``), so the two figures are the same: a handshake's CPU.
"""

from __future__ import annotations

import argparse
import contextlib
import ssl
import tempfile
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import certifi
import trustme

from petstore_contract.transport import Transport
from petstore_contract.transport.options import TransportOptions


class _Answer(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def _ok(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"[]")

    do_GET = do_POST = _ok

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextlib.contextmanager
def peer(context: ssl.SSLContext) -> Iterator[str]:
    """A loopback TLS peer answering 200 to anything; its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Answer)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def cpu_per_write(base_url: str, bundle: Path, writes: int) -> float:
    """Milliseconds of this thread's CPU per write on a new connection (the run's first request left out)."""
    transport = Transport(TransportOptions(base_url=base_url, api_key="bench-key", timeout=5.0, verify=str(bundle)))
    try:
        transport.request("GET", "/pets")
        started = time.thread_time()
        for _ in range(writes):
            transport.request("POST", "/pets", body=b'{"name": "Rex", "categoryId": 1}')
        return (time.thread_time() - started) / writes * 1000
    finally:
        transport.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writes", type=int, default=50, help="writes a bundle (default 50)")
    writes = max(1, parser.parse_args().writes)
    ca = trustme.CA()
    server_side = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(server_side)
    with tempfile.TemporaryDirectory() as tmp, peer(server_side) as base_url:
        small, large = Path(tmp) / "one.pem", Path(tmp) / "certifi-and-one.pem"
        small.write_bytes(ca.cert_pem.bytes())
        large.write_bytes(Path(certifi.where()).read_bytes() + ca.cert_pem.bytes())
        for name, bundle in (("a bundle of one certificate", small), ("certifi's bundle and it", large)):
            print(f"{name}: {cpu_per_write(base_url, bundle, writes):.1f} ms of CPU a write ({writes} writes)")


if __name__ == "__main__":
    main()
