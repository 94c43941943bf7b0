"""Apache httpd (Debian's apache2) as the reverse proxy in front of the reference, run from a generated config.

The config is what a vendor deploys in front of a small service (mod_proxy to the application, the
event MPM), with ``ErrorDocument``s answering the Error body (§7) for what httpd answers itself.  Each
fault is one line a vendor could leave (``FAULTS``).  httpd runs in the foreground (``-DFOREGROUND``)
from a temporary folder on a loopback port; no system service is touched.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import httpd_pages

MODULES = "/usr/lib/apache2/modules"
CONFIG = """
ServerRoot {folder}
PidFile {folder}/httpd.pid
ErrorLog {folder}/error.log
LogLevel warn
Listen 127.0.0.1:{port}
ServerName 127.0.0.1
{user}
LoadModule mpm_event_module {modules}/mod_mpm_event.so
LoadModule authz_core_module {modules}/mod_authz_core.so
LoadModule mime_module {modules}/mod_mime.so
LoadModule alias_module {modules}/mod_alias.so
LoadModule proxy_module {modules}/mod_proxy.so
LoadModule proxy_http_module {modules}/mod_proxy_http.so
LoadModule deflate_module {modules}/mod_deflate.so
LoadModule filter_module {modules}/mod_filter.so
LoadModule headers_module {modules}/mod_headers.so
LoadModule env_module {modules}/mod_env.so
TypesConfig /dev/null
AddType application/json .json
ServerTokens Prod
TraceEnable {trace}
# httpd's own 405 (TRACE off) names no Allow; RFC 9110 §15.5.6 asks for one: the compliant config adds it.
Header always setifempty Allow "GET, HEAD, POST" "expr=%{{REQUEST_STATUS}} == 405"
{limit}
{error_pages}
Alias /errors/ {folder}/errors/
<Directory {folder}/errors>
    Require all granted
</Directory>
# httpd passes Expect: 100-continue on and fails (500) when the application answers without reading the
# body (a 401 before the body, as §5.3 asks): a compliant deployment answers the Expect itself.
Proxy100Continue Off
ProxyPass /v1 http://127.0.0.1:{upstream}/v1
ProxyPassReverse /v1 http://127.0.0.1:{upstream}/v1
{compression}
"""
# Compression as vendors turn it on: for JSON, only when the client asks (mod_deflate honours Accept-Encoding).
COMPRESSION = "AddOutputFilterByType DEFLATE application/json"
# One line a vendor could leave, each: what it changes in the compliant config.
FAULTS = {
    "html-error-pages": "no ErrorDocument: httpd's own HTML pages for what it answers itself",
    "body-limit-html": "LimitRequestBody 1048576: a 413 page of httpd's own before the key is checked",
    "gzip-forced": "gzip for every client, asked or not (force-gzip)",
    "no-404-page": "no ErrorDocument 404 (the application answers its own): httpd's HTML 404 to an encoded slash",
}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def config(folder: Path, port: int, upstream: int, fault: str = "") -> str:
    user = ""
    if os.geteuid() == 0:
        user = "User nobody\nGroup nogroup"
    return CONFIG.format(
        folder=folder,
        port=port,
        upstream=upstream,
        modules=MODULES,
        user=user,
        trace="extended" if fault == "trace-enabled" else "off",
        limit="LimitRequestBody 1048576" if fault == "body-limit-html" else "",
        error_pages=_error_pages(folder, fault),
        compression=COMPRESSION + ("\nSetEnv force-gzip 1" if fault == "gzip-forced" else ""),
    )


def _error_pages(folder: Path, fault: str) -> str:
    if fault in ("html-error-pages", "body-limit-html"):
        return ""
    lines = httpd_pages.write_error_pages(folder).splitlines()
    return "\n".join(line for line in lines if not (fault == "no-404-page" and line.startswith("ErrorDocument 404 ")))


class Apache:
    """httpd in front of ``upstream`` (a loopback port serving /v1), with one fault or none."""

    def __init__(self, upstream: int, fault: str = "") -> None:
        binary = shutil.which("apache2") or "/usr/sbin/apache2"
        if not os.access(binary, os.X_OK):
            raise OSError("apache2 is not installed (Debian: apt-get install apache2)")
        self.folder = Path(tempfile.mkdtemp(prefix="webservers-apache-"))
        self.folder.chmod(0o755)
        self.process: subprocess.Popen[bytes] | None = None
        for _attempt in range(5):
            self.port = free_port()
            conf = self.folder / "httpd.conf"
            conf.write_text(config(self.folder, self.port, upstream, fault), encoding="utf-8")
            env = {**os.environ, "APACHE_RUN_DIR": str(self.folder), "APACHE_LOCK_DIR": str(self.folder)}
            self.process = subprocess.Popen(
                [binary, "-f", str(conf), "-DFOREGROUND"],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                env=env,
            )
            if self._listening():
                return
            self.stop(keep_folder=True)
        log = (
            (self.folder / "error.log").read_text(errors="replace")[-300:]
            if (self.folder / "error.log").exists()
            else ""
        )
        self.stop()
        raise OSError(f"apache2 did not start: {log.strip().splitlines()[-1:] or 'no log'}")

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

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
            self.process.send_signal(signal.SIGTERM)  # httpd's graceful stop of its children
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None
        if not keep_folder:
            shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> Apache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
