"""Run from a copy of the checkout's ``selftests/`` (``test_worker_files.py``): what the web servers' workers read.

    python selftests/any_checkout.py KEY

From wherever this copy lies: generates every web server's configuration (Apache httpd in front and as
CGI, nginx, lighttpd, each Apache + mod_wsgi deployment) and names every existing path in it, with the
CGI script's module and mod_wsgi's ``sys.path``, that the workers (``nobody`` under root) cannot read;
then starts the mod_wsgi deployment and the CGI server and gets ``/v1/pets`` from each with ``KEY``.
Prints one JSON object: ``{"unreadable": [...], "answers": {server: status}}``.
"""

from __future__ import annotations

import http.client
import json
import re
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE / "deployments"), str(HERE / "webservers")]

import apache  # noqa: E402 (the copy's own modules, through the path above)
import apache_cgi  # noqa: E402
import configs  # noqa: E402
import deploykit  # noqa: E402
import lighttpd  # noqa: E402
import nginx  # noqa: E402

import worker_files  # noqa: E402

# A path in a configuration: quoted (it may hold a space), or a bare word starting with "/".
PATH = re.compile(r'"(/[^"]+)"|\'(/[^\']+)\'|(?<![\w:/.])(/[^\s"\';{}(),]+)')


def named_paths(text: str) -> set[Path]:
    """The paths a configuration names that exist (the others are URLs, or files the server makes)."""
    found = {Path(next(g for g in m.groups() if g)) for m in PATH.finditer(text)}
    return {p for p in found if p.exists()}


def configurations(folder: Path, key: str) -> dict[str, str]:
    """Every generated configuration (with what else the workers are given to read), by server."""
    port = 8
    texts: dict[str, Callable[[Path], str]] = {
        "apache": lambda f: apache.config(f, port, 9),
        "apache-cgi": lambda f: apache_cgi.config(f, port, key) + (f / "cgi" / "petstore.cgi").read_text(),
        "nginx": lambda f: nginx.config(f, port, 9),
        "lighttpd": lambda f: lighttpd.config(f, port, 9),
    }
    wsgi_path = "\n".join(f'"{p}"' for p in configs.wsgi_path())
    rows = [*deploykit.DEPLOYMENTS.values(), *(row for row, _ in deploykit.FAULTY.values())]
    for row in (r for r in rows if r.runtime == "apache"):
        texts[row.name] = lambda f, r=row: (
            configs.write_apache(f, port, r.workers, r.wrong_line, r.error_pages).read_text() + wsgi_path
        )
    made = {}
    for name, text in texts.items():
        (folder / name).mkdir()
        (folder / name).chmod(0o755)
        made[name] = text(folder / name)
    return made


def status(port: int, key: str) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        connection.request("GET", "/v1/pets", headers={"Authorization": f"Bearer {key}"})
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


def main(key: str) -> dict[str, object]:
    folder = worker_files.folder("any-checkout-")
    try:
        unreadable = sorted(
            f"{name}: {path}"
            for name, text in configurations(folder, key).items()
            for path in named_paths(text)
            if not worker_files.readable(path)
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    answers = {}
    with deploykit.deployed("apache_event_wsgi", key) as running:
        answers["apache_event_wsgi"] = status(running.port, key)
    with apache_cgi.ApacheCgi(key) as cgi:
        answers["apache-cgi"] = status(cgi.port, key)
    return {"unreadable": unreadable, "answers": answers}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1])))
