"""The WSGI application every Python deployment serves: blind round 3's Flask Pet Store over SQL.

``selftests/blind3/flask_app.py`` (Flask 3, SQLAlchemy Core on a SQLite file, webargs) is compliant as
it stands; here it is built the way a WSGI server loads an app, once in each worker process, from the
environment the server was started with:

- ``PETSTORE_API_KEY``: the key;
- ``PETSTORE_DEPLOY_STORE``: the folder of the SQLite store, shared by every worker process (a store in
  memory would be one store a process); it starts empty;
- ``PETSTORE_DEPLOY_LATENCY_MS``: a delay before each request (a slow application: a database a network
  hop away), 0 by default;
- ``PETSTORE_DEPLOY_PATH``: folders put first on ``sys.path``. mod_wsgi runs this file in Debian's
  interpreter, which does not know the project's virtual environment; its site-packages go first, so that
  the venv's Flask is imported and not an older Debian package of one of its dependencies.

Beside the store, the application serves its own error pages, as vendors give a web server's
``ErrorDocument`` a URL of the application: ``/error-page/<status>`` (outside the API's ``/v1``) answers
that status with the Error body (``error_page``).
"""

from __future__ import annotations

import fcntl
import http
import json
import os
import re
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
BLIND3 = HERE.parent / "blind3"
for folder in reversed([*os.environ.get("PETSTORE_DEPLOY_PATH", "").split(os.pathsep), str(BLIND3)]):
    if folder:
        sys.path.insert(0, folder)

from flask_app import SqlStore, build_app  # noqa: E402 (blind round 3's app, found through the path above)

StartResponse = Callable[..., Any]
Wsgi = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]


def store(folder: Path) -> SqlStore:
    """The shared store; the first worker creates its table, the others wait for it (one lock file)."""
    with open(folder / "init.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return SqlStore(folder, 0)


def slowed(app: Wsgi, seconds: float) -> Wsgi:
    def slow(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        time.sleep(seconds)  # the worker is held for this long, as a slow database would hold it
        return app(environ, start_response)

    return slow


ERROR_PAGE = re.compile(r"/error-page/([45][0-9][0-9])")


def error_page(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes] | None:
    """The application's page for a status the web server answers itself (its ``ErrorDocument``), or None."""
    found = ERROR_PAGE.fullmatch(environ.get("PATH_INFO", ""))
    if found is None:
        return None
    status = int(found.group(1))
    try:
        phrase = http.HTTPStatus(status).phrase
    except ValueError:
        phrase = "Error"
    code = re.sub(r"[^a-z]+", "_", phrase.lower()).strip("_")
    body = json.dumps({"code": code, "message": phrase, "status": status}).encode()
    start_response(f"{status} {phrase}", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
    return [body]


def with_error_pages(app: Wsgi) -> Wsgi:
    def serve(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        page = error_page(environ, start_response)
        return page if page is not None else app(environ, start_response)

    return serve


def build() -> Wsgi:
    key = os.environ.get("PETSTORE_API_KEY", "")
    folder = os.environ.get("PETSTORE_DEPLOY_STORE", "")
    if not key or not folder:
        raise RuntimeError("PETSTORE_API_KEY and PETSTORE_DEPLOY_STORE must be set")
    app: Wsgi = build_app(frozenset(), key, store(Path(folder)))
    latency = int(os.environ.get("PETSTORE_DEPLOY_LATENCY_MS", "0")) / 1000
    return with_error_pages(slowed(app, latency) if latency > 0 else app)


application = build()
