"""nginx (Debian's package) as the reverse proxy in front of an app, run from a generated config.

The config is what a vendor deploys: a 64 KiB ``client_max_body_size``, and ``error_page``s that
answer the Error body (§7) for what nginx refuses itself (413 over the body limit, 414, and 502/504
when the app is down), because nginx's own pages are HTML. The ``nginx_html_pages`` flag leaves the
``error_page``s out: nginx's default HTML 413 page.

nginx runs in the foreground in a temporary folder (its pid, logs and temp paths there), on a
loopback port; it dies with the harness (``PR_SET_PDEATHSIG``) and is stopped by it.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

# The self-tests' folder, for what every web server shares (appended: this round's own modules come first)
if str(Path(__file__).resolve().parent.parent) not in sys.path:
    sys.path.append(str(Path(__file__).resolve().parent.parent))
import worker_files

BODY_LIMIT = "64k"
ERRORS = {
    413: ("payload_too_large", "The request body exceeds 64 KiB."),
    414: ("uri_too_long", "The request URI is too long."),
    502: ("bad_gateway", "The service is unavailable."),
    504: ("gateway_timeout", "The service did not answer in time."),
}
CONFIG = """
daemon off;
master_process on;
worker_processes 1;
pid {folder}/nginx.pid;
error_log {folder}/error.log warn;
{user}
events {{ worker_connections 512; }}
http {{
    access_log off;
    server_tokens off;
    client_body_temp_path {folder}/client_body;
    proxy_temp_path {folder}/proxy;
    fastcgi_temp_path {folder}/fastcgi;
    uwsgi_temp_path {folder}/uwsgi;
    scgi_temp_path {folder}/scgi;
    server {{
        listen 127.0.0.1:{port};
        client_max_body_size {limit};
        client_body_buffer_size {limit};
{error_pages}
        location /v1/ {{
            proxy_pass http://127.0.0.1:{upstream};
            proxy_set_header Host $http_host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_set_header X-Forwarded-Proto $scheme;
            proxy_read_timeout 30s;
        }}
        location / {{
            default_type application/json;
            return 404 '{{"code":"not_found","message":"No such resource.","status":404}}';
        }}
    }}
}}
"""


def binary() -> str | None:
    return shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx",) if os.access(p, os.X_OK)), None)


def error_pages() -> str:
    lines = []
    for status, (code, message) in ERRORS.items():
        body = f'{{"code":"{code}","message":"{message}","status":{status}}}'
        lines.append(f"        error_page {status} @e{status};")
        lines.append(f"        location @e{status} {{ default_type application/json; return {status} '{body}'; }}")
    return "\n".join(lines)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


LIBC = ctypes.CDLL("libc.so.6", use_errno=True)  # loaded here: the child between fork and exec only calls it


def die_with_parent() -> None:
    """In the child: the kernel sends SIGTERM to nginx when the harness dies (even by SIGKILL)."""
    LIBC.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class Nginx:
    def __init__(self, upstream: int, port: int, flags: frozenset[str]) -> None:
        nginx = binary()
        if nginx is None:
            raise OSError("nginx is not installed (Debian: apt-get install nginx-light)")
        self.folder = worker_files.folder("blind3-nginx-")  # the workers (nobody under root) reach their temp paths
        self.process: subprocess.Popen[bytes] | None = None
        owner = worker_files.worker_user()
        user = f"user {owner[0]} {owner[1]};" if owner else ""
        pages = "" if "nginx_html_pages" in flags else error_pages()
        for _attempt in range(5):  # a free port can be taken between the probe and nginx's bind
            self.port = port or free_port()
            conf = self.folder / "nginx.conf"
            text = CONFIG.format(
                folder=self.folder, user=user, port=self.port, limit=BODY_LIMIT, upstream=upstream, error_pages=pages
            )
            conf.write_text(text, encoding="utf-8")
            command = [nginx, "-p", str(self.folder), "-c", str(conf), "-e", str(self.folder / "error.log")]
            self.process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                preexec_fn=die_with_parent,  # the harness starts nginx before any thread of its own
            )
            if self._listening():
                return
            self.stop(keep_folder=True)
            if port:
                break
        log = (self.folder / "error.log").read_text(errors="replace")[-300:] if self.folder.exists() else ""
        self.stop()
        raise OSError(f"nginx did not start: {log.strip().splitlines()[-1:] or 'no log'}")

    def _listening(self) -> bool:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                return False
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port), timeout=1):
                return True
            time.sleep(0.05)
        return False

    def stop(self, keep_folder: bool = False) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()  # nginx's fast shutdown
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        if not keep_folder:
            shutil.rmtree(self.folder, ignore_errors=True)
