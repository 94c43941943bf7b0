"""A small reverse proxy (a "gateway") in front of the application.

It listens on its own loopback port and forwards every request to the
upstream uvicorn server with ``http.client``. A correct gateway passes status,
headers and body through and adds its own ``Via``; the flags of a catalog entry
turn on the gateway mistakes real deployments make (caches, error pages, header
rewriting, body and buffer limits, JSON re-serialisation).
"""

from __future__ import annotations

import http.client
import json
import re
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

HOP_BY_HOP = {
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "expect",
    "content-length",
    "date",
    "server",
}
HTML_PAGE = (
    "<html>\r\n<head><title>{status} {reason}</title></head>\r\n<body>\r\n"
    "<center><h1>{status} {reason}</h1></center>\r\n<hr><center>gateway</center>\r\n"
    "</body>\r\n</html>\r\n"
)
REQUEST_BODY_LIMIT = 8 * 1024
RESPONSE_BUFFER = 64 * 1024
CACHE_TTL = 30.0
PET_PATH = re.compile(r"/v1/pets/[^/?]+")


def js_numbers(value: Any) -> Any:
    """What a JavaScript gateway does to numbers: every one becomes a double."""
    if isinstance(value, dict):
        return {k: js_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [js_numbers(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


class Gateway:
    def __init__(self, flags: frozenset[str], upstream_port: int) -> None:
        self.flags = flags
        self.upstream_port = upstream_port
        self.cache: dict[tuple[str, ...], tuple[float, int, list[tuple[str, str]], bytes]] = {}
        self.lock = threading.Lock()

    def on(self, flag: str) -> bool:
        return flag in self.flags

    def cache_key(self, method: str, target: str, auth: str) -> tuple[str, ...] | None:
        if method != "GET":
            return None
        path = target.split("?", 1)[0]
        if self.on("gw_cache_ignores_auth") and PET_PATH.fullmatch(path):
            return ("pet", path)
        if self.on("gw_negative_cache_404") and PET_PATH.fullmatch(path):
            return ("pet", path, auth)
        if self.on("gw_private_read_cache") and PET_PATH.fullmatch(path):
            return ("pet", path, auth)
        if self.on("gw_cache_key_without_query") and path == "/v1/pets":
            return ("list", path, auth)
        return None

    def cacheable(self, key: tuple[str, ...], status: int) -> bool:
        if self.on("gw_negative_cache_404"):
            return status == 404
        return status == 200

    def forward(
        self, method: str, target: str, headers: list[tuple[str, str]], body: bytes
    ) -> tuple[int, list[tuple[str, str]], bytes]:
        if self.on("gw_drops_query"):
            target = target.split("?", 1)[0]
        if method == "POST" and self.on("gw_post_drops_authorization"):
            headers = [(k, v) for k, v in headers if k.lower() in ("content-type", "accept")]
        conn = http.client.HTTPConnection("127.0.0.1", self.upstream_port, timeout=60)
        try:
            out = [(k, v) for k, v in headers if k.lower() not in HOP_BY_HOP | {"host"}]
            out.append(("Host", f"127.0.0.1:{self.upstream_port}"))
            out.append(("Content-Length", str(len(body))))
            conn.putrequest(method, target, skip_host=True, skip_accept_encoding=True)
            for k, v in out:
                conn.putheader(k, v)
            conn.endheaders(body)
            resp = conn.getresponse()
            data = resp.read()
            return resp.status, resp.getheaders(), data
        finally:
            conn.close()

    def handle(
        self, method: str, target: str, headers: list[tuple[str, str]], body: bytes
    ) -> tuple[int, list[tuple[str, str]], bytes]:
        auth = next((v for k, v in headers if k.lower() == "authorization"), "")
        if len(body) > REQUEST_BODY_LIMIT and self.on("gw_body_limit_413_html"):
            return self.html(413, "Request Entity Too Large")
        key = self.cache_key(method, target, auth)
        if key is not None:
            with self.lock:
                hit = self.cache.get(key)
            if hit and hit[0] > time.monotonic():
                return hit[1], hit[2] + [("X-Cache", "HIT")], hit[3]
        try:
            status, resp_headers, data = self.forward(method, target, headers, body)
        except OSError:
            return self.html(502, "Bad Gateway")
        resp_headers = [(k, v) for k, v in resp_headers if k.lower() not in HOP_BY_HOP]
        if len(data) > RESPONSE_BUFFER and self.on("gw_buffer_502"):
            return self.html(502, "Bad Gateway")
        if status == 404 and self.on("gw_html_404"):
            return self.html(404, "Not Found")
        if self.on("gw_strips_www_authenticate"):
            resp_headers = [(k, v) for k, v in resp_headers if k.lower() != "www-authenticate"]
        if self.on("gw_adds_deprecation") and target.startswith("/v1/pets"):
            resp_headers = [(k, v) for k, v in resp_headers if k.lower() not in ("deprecation", "sunset")]
            resp_headers += [
                ("Deprecation", "@1735689600"),
                ("Sunset", "Thu, 05 Dec 2030 00:00:00 GMT"),
            ]
        if self.on("gw_content_type_text"):
            resp_headers = [(k, v) for k, v in resp_headers if k.lower() != "content-type"]
            resp_headers.append(("Content-Type", "text/plain"))
        if self.on("gw_status_200") and 200 <= status < 300:
            status = 200
        if self.on("gw_json_float") and data[:1] in (b"{", b"["):
            value = js_numbers(json.loads(data, parse_int=float))
            data = json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()
        if self.on("gateway_headers"):
            resp_headers += [
                ("X-Request-Id", str(uuid.uuid4())),
                ("Cache-Control", "no-store"),
                ("X-Frame-Options", "DENY"),
                ("Strict-Transport-Security", "max-age=31536000"),
            ]
        resp_headers.append(("Via", "1.1 petstore-gateway"))
        if key is not None and self.cacheable(key, status):
            with self.lock:
                self.cache[key] = (time.monotonic() + CACHE_TTL, status, resp_headers, data)
        return status, resp_headers, data

    def html(self, status: int, reason: str) -> tuple[int, list[tuple[str, str]], bytes]:
        page = HTML_PAGE.format(status=status, reason=reason).encode()
        return status, [("Content-Type", "text/html"), ("Via", "1.1 petstore-gateway")], page


def serve_gateway(flags: frozenset[str], upstream_port: int, port: int) -> ThreadingHTTPServer:
    gateway = Gateway(flags, upstream_port)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "petstore-gateway/1.0"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def relay(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length > 0 else b""
            # HEAD goes upstream as GET, so that Content-Length is the GET body's length
            method = "GET" if self.command == "HEAD" else self.command
            status, headers, data = gateway.handle(method, self.path, list(self.headers.items()), body)
            self.send_response(status)
            for k, v in headers:
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = do_HEAD = relay

    httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd
