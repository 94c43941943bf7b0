"""nginx (Debian's nginx-light or nginx) as the reverse proxy in front of the reference, run from a generated config.

The config is what a vendor writes for a small JSON API behind nginx: ``proxy_pass`` to an upstream
block without a URI (the request-target passed on as the client sent it), HTTP/1.1 to the upstream
with kept-alive connections, ``error_page``s answering the Error body (§7) for what nginx answers
itself (``error_pages.py``), a body limit above the document's needs (nginx's default is 1 MiB),
and gzip for JSON only when asked.  Each fault is one line a vendor could leave (``FAULTS``).  nginx
runs in the foreground (``-g 'daemon off;'``) with its prefix, pid, logs and temp paths in a
temporary folder, on a loopback port; no system service is touched.
"""

from __future__ import annotations

from pathlib import Path

from foreground import ForegroundServer, installed

import error_pages
from worker_files import worker_user

CONFIG = """
worker_processes 1;
pid {folder}/nginx.pid;
error_log {folder}/error.log warn;
{user}
events {{ worker_connections 256; }}
http {{
    access_log off;
    server_tokens off;
    types {{ application/json json; }}
    default_type application/octet-stream;
    client_body_temp_path {folder}/client_body;
    proxy_temp_path {folder}/proxy;
    fastcgi_temp_path {folder}/fastcgi;
    uwsgi_temp_path {folder}/uwsgi;
    scgi_temp_path {folder}/scgi;
{limit}
{compression}
    upstream petstore {{
        server 127.0.0.1:{upstream};
        keepalive 8;
    }}
    server {{
        listen 127.0.0.1:{port};
        root {folder}/html;
{error_pages}
        location /errors/ {{
            internal;
            root {folder};
        }}
        location /v1/ {{
            {proxy_pass}
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $http_host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_set_header X-Forwarded-Proto $scheme;
{intercept}
        }}
    }}
}}
"""
LIMIT = "    client_max_body_size 16m;"
# Compression as vendors turn it on: gzip for JSON; nginx honours Accept-Encoding (and its q=0).
COMPRESSION = "    gzip on;\n    gzip_types application/json;\n    gzip_proxied any;\n    gzip_vary on;"
PROXY_PASS = "proxy_pass http://petstore;"
# One line a vendor could leave (body-limit-html: nginx's stock config, the two lines it lacks), each: what it
# changes in the compliant config.  Two of them break nothing the document judges (test_web_servers.py).
FAULTS = {
    "html-error-pages": "no error_page: nginx's own HTML pages for what it answers itself",
    "body-limit-html": "no client_max_body_size (nginx's 1 MiB) and no error_page: its HTML 413 before the key",
    "intercept-errors": "proxy_intercept_errors on: nginx's error pages for the application's errors too",
    "proxy-pass-uri": "proxy_pass http://petstore/v1/; (with a URI): nginx decodes the path and encodes it anew",
}


def config(folder: Path, port: int, upstream: int, fault: str = "") -> str:
    owner = worker_user()
    pages = ""
    if fault not in ("html-error-pages", "body-limit-html"):
        error_pages.write_pages(folder)
        codes = " ".join(map(str, error_pages.ERROR_CODES))
        pages = f"        error_page {codes} /errors/$status.json;"
    return CONFIG.format(
        folder=folder,
        port=port,
        upstream=upstream,
        user=f"user {owner[0]} {owner[1]};" if owner else "",
        limit="" if fault == "body-limit-html" else LIMIT,
        compression=COMPRESSION,
        error_pages=pages,
        intercept="            proxy_intercept_errors on;" if fault == "intercept-errors" else "",
        proxy_pass="proxy_pass http://petstore/v1/;" if fault == "proxy-pass-uri" else PROXY_PASS,
    )


class Nginx(ForegroundServer):
    """nginx in front of ``upstream`` (a loopback port serving /v1), with one fault or none."""

    def __init__(self, upstream: int, fault: str = "") -> None:
        def write(folder: Path, port: int) -> Path:
            conf = folder / "nginx.conf"
            conf.write_text(config(folder, port, upstream, fault), encoding="utf-8")
            return conf

        super().__init__(
            "nginx",
            installed("nginx"),
            write,
            # -e: the error log from the start (before the config is read; Debian's default is /var/log)
            lambda conf: [
                "-p",
                str(conf.parent),
                "-c",
                str(conf),
                "-e",
                str(conf.parent / "error.log"),
                "-g",
                "daemon off;",
            ],
        )
