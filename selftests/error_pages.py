"""The Error body pages a vendor gives a web server for what it answers itself (§7: "All error responses use
the Error body"), shared by the self-tests that run one in front of the service (``webservers/``: Apache
httpd, nginx, lighttpd; ``deployments/configs.py``).

Each page is a static file ``errors/NNN.json``; each server's config points its own error-page directive
at them (httpd's ``ErrorDocument``, nginx's ``error_page``, lighttpd's ``server.errorfile-prefix``).
"""

from __future__ import annotations

import json
from pathlib import Path

# The statuses a web server may answer itself (a request line it refuses, a path it will not map, TRACE, a
# body or URI too large, a chunked body a handler does not take, an upstream or a daemon that does not answer).
ERROR_CODES = {
    400: "bad_request",
    404: "not_found",
    405: "method_not_allowed",
    408: "request_timeout",
    411: "length_required",
    413: "content_too_large",
    414: "uri_too_long",
    431: "request_header_fields_too_large",
    500: "internal_error",
    501: "not_implemented",
    502: "bad_gateway",
    503: "service_unavailable",
    504: "gateway_timeout",
}


def write_pages(folder: Path) -> Path:
    """An Error body file per status, ``folder/errors/NNN.json`` (readable by a server's unprivileged
    workers); the folder."""
    errors = folder / "errors"
    errors.mkdir(exist_ok=True)
    errors.chmod(0o755)
    for status, code in ERROR_CODES.items():
        page = errors / f"{status}.json"
        page.write_text(json.dumps({"code": code, "message": code.replace("_", " "), "status": status}), "utf-8")
        page.chmod(0o644)
    return errors


def write_error_pages(folder: Path) -> str:
    """httpd's: the pages (``write_pages``) and the ``ErrorDocument`` lines that serve them at ``/errors/``
    (the config aliases that path to the folder)."""
    write_pages(folder)
    return "\n".join(f"ErrorDocument {status} /errors/{status}.json" for status in ERROR_CODES)
