"""lighttpd (Debian's package) as the reverse proxy in front of the reference, run from a generated config.

The config is what a vendor writes for a small JSON API behind lighttpd: mod_proxy to the application,
``server.errorfile-prefix`` pages answering the Error body (§7) for what lighttpd answers itself
(``error_pages.py``; lighttpd looks up ``<prefix><status>.html`` and types it by its extension, so the
JSON pages are named ``.html`` and typed ``application/json``), a body limit above the document's
needs, and no compression: lighttpd 1.4's mod_deflate takes ``gzip;q=0`` for a yes (RFC 9110 §12.5.3:
q=0 is "not acceptable"), so a compliant deployment leaves it off.  Each fault is one line a vendor
could leave (``FAULTS``).  lighttpd runs in the foreground (``-D``) with its pid and log in a
temporary folder, on a loopback port; no system service is touched.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from foreground import ForegroundServer, installed

import error_pages
from worker_files import worker_user

CONFIG = """
server.modules = ("mod_proxy", "mod_deflate")
server.document-root = "{folder}/html"
server.bind = "127.0.0.1"
server.port = {port}
server.pid-file = "{folder}/lighttpd.pid"
server.errorlog = "{folder}/error.log"
server.tag = "lighttpd"
{user}
{limit}
# lighttpd types its error pages by extension: <prefix><status>.html, here the JSON Error bodies.
mimetype.assign = (".json" => "application/json", ".html" => "application/json")
{error_pages}
{compression}
proxy.server = ("/v1/" => (("host" => "127.0.0.1", "port" => {upstream})))
{extra}
"""
LIMIT = "server.max-request-size = 16384"  # KiB: 16 MiB
# mod_deflate as its users turn it on for JSON: the fault "deflate-json" (it ignores q=0).
COMPRESSION = 'deflate.mimetypes = ("application/json")\ndeflate.allowed-encodings = ("gzip", "deflate")'
FAULTS = {
    "deflate-json": "deflate.mimetypes for JSON: gzip even to a client that refuses it (gzip;q=0)",
    "html-error-pages": "no server.errorfile-prefix: lighttpd's own HTML pages for what it answers itself",
    "error-intercept": "server.error-intercept = \"enable\": lighttpd's error pages for the application's too",
}


def _pages(folder: Path) -> str:
    errors = error_pages.write_pages(folder)
    for page in list(errors.glob("*.json")):
        shutil.copy(page, page.with_suffix(".html"))
        page.with_suffix(".html").chmod(0o644)
    return f'server.errorfile-prefix = "{errors}/"'


def config(folder: Path, port: int, upstream: int, fault: str = "") -> str:
    owner = worker_user()
    (folder / "html").mkdir(exist_ok=True)
    log = folder / "error.log"
    log.touch()
    if owner:  # lighttpd opens its log after it dropped to the user (Debian's package chowns /var/log/lighttpd)
        shutil.chown(log, *owner)
    return CONFIG.format(
        folder=folder,
        port=port,
        upstream=upstream,
        user=f'server.username = "{owner[0]}"\nserver.groupname = "{owner[1]}"' if owner else "",
        limit=LIMIT,
        error_pages="" if fault == "html-error-pages" else _pages(folder),
        compression=COMPRESSION if fault == "deflate-json" else "",
        extra='server.error-intercept = "enable"' if fault == "error-intercept" else "",
    )


class Lighttpd(ForegroundServer):
    """lighttpd in front of ``upstream`` (a loopback port serving /v1), with one fault or none."""

    def __init__(self, upstream: int, fault: str = "") -> None:
        def write(folder: Path, port: int) -> Path:
            conf = folder / "lighttpd.conf"
            conf.write_text(config(folder, port, upstream, fault), encoding="utf-8")
            return conf

        super().__init__("lighttpd", installed("lighttpd"), write, lambda conf: ["-D", "-f", str(conf)])
