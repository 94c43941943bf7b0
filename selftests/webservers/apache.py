"""Apache httpd (Debian's apache2) as the reverse proxy in front of the reference, run from a generated config.

The config is what a vendor deploys in front of a small service (mod_proxy to the application, the
event MPM), with ``ErrorDocument``s answering the Error body (§7) for what httpd answers itself.  Each
fault is one line a vendor could leave (``FAULTS``).  httpd runs in the foreground (``-DFOREGROUND``)
from a temporary folder on a loopback port; no system service is touched.
"""

from __future__ import annotations

from pathlib import Path

from foreground import ForegroundServer, installed

import error_pages
from worker_files import worker_user

MODULES = "/usr/lib/apache2/modules"
# What every httpd configuration here starts with: the server on its port, its user, the event MPM and the
# modules every one loads, then ``{more_modules}``; the vendor's lines for what httpd answers itself.
BASE = """
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
LoadModule headers_module {modules}/mod_headers.so
LoadModule env_module {modules}/mod_env.so
{more_modules}
TypesConfig /dev/null
AddType application/json .json
ServerTokens Prod
TraceEnable {trace}
# httpd's own 405 (TRACE off) names no Allow; RFC 9110 §15.5.6 asks for one: the compliant config adds it.
Header always setifempty Allow "GET, HEAD, POST" "expr=%{{REQUEST_STATUS}} == 405"
{error_pages}
Alias /errors/ {folder}/errors/
<Directory {folder}/errors>
    Require all granted
</Directory>
"""
CONFIG = (
    BASE
    + """
{limit}
# httpd passes Expect: 100-continue on and fails (500) when the application answers without reading the
# body (a 401 before the body, as §5.3 asks): a compliant deployment answers the Expect itself.
Proxy100Continue Off
ProxyPass /v1 http://127.0.0.1:{upstream}/v1
ProxyPassReverse /v1 http://127.0.0.1:{upstream}/v1
{compression}
"""
)
PROXY_MODULES = ("proxy", "proxy_http", "deflate", "filter")
# Compression as vendors turn it on: for JSON, only when the client asks (mod_deflate honours Accept-Encoding).
COMPRESSION = "AddOutputFilterByType DEFLATE application/json"
# One line a vendor could leave, each: what it changes in the compliant config.
FAULTS = {
    "html-error-pages": "no ErrorDocument: httpd's own HTML pages for what it answers itself",
    "body-limit-html": "LimitRequestBody 1048576: a 413 page of httpd's own before the key is checked",
    "gzip-forced": "gzip for every client, asked or not (force-gzip)",
    "no-404-page": "no ErrorDocument 404 (the application answers its own): httpd's HTML 404 to an encoded slash",
}


def config(folder: Path, port: int, upstream: int, fault: str = "") -> str:
    owner = worker_user()
    user = f"User {owner[0]}\nGroup {owner[1]}" if owner else ""
    return CONFIG.format(
        folder=folder,
        port=port,
        upstream=upstream,
        modules=MODULES,
        more_modules=load_modules(*PROXY_MODULES),
        user=user,
        trace="extended" if fault == "trace-enabled" else "off",
        limit="LimitRequestBody 1048576" if fault == "body-limit-html" else "",
        error_pages=_error_pages(folder, fault),
        compression=COMPRESSION + ("\nSetEnv force-gzip 1" if fault == "gzip-forced" else ""),
    )


def load_modules(*names: str) -> str:
    return "\n".join(f"LoadModule {name}_module {MODULES}/mod_{name}.so" for name in names)


def _error_pages(folder: Path, fault: str) -> str:
    if fault in ("html-error-pages", "body-limit-html"):
        return ""
    lines = error_pages.write_error_pages(folder).splitlines()
    return "\n".join(line for line in lines if not (fault == "no-404-page" and line.startswith("ErrorDocument 404 ")))


class Apache(ForegroundServer):
    """httpd in front of ``upstream`` (a loopback port serving /v1), with one fault or none."""

    def __init__(self, upstream: int, fault: str = "") -> None:
        def write(folder: Path, port: int) -> Path:
            conf = folder / "httpd.conf"
            conf.write_text(config(folder, port, upstream, fault), encoding="utf-8")
            return conf

        super().__init__(
            "apache2",
            installed("apache2"),
            write,
            lambda conf: ["-f", str(conf), "-DFOREGROUND"],  # SIGTERM: httpd's graceful stop of its children
            lambda folder: {"APACHE_RUN_DIR": str(folder), "APACHE_LOCK_DIR": str(folder)},
        )
