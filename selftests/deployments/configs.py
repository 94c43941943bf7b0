"""The deployments' configurations, generated into a server's temporary folder (gunicorn's and Apache's).

Each is what a small shop deploys, with the server's defaults where the shop would not touch them:
gunicorn's keep-alive (2 s), Apache's ``KeepAliveTimeout`` (5 s) and its event MPM's handling of
kept-alive connections when every worker is busy (``AsyncRequestWorkerFactor`` 2).
"""

from __future__ import annotations

import http.client
import importlib.util
import os
import shutil
import sys
import sysconfig
from pathlib import Path
from types import ModuleType

import error_pages
import worker_files

HERE = Path(__file__).resolve().parent
APACHE_MODULES = Path("/usr/lib/apache2/modules")
APACHE_WORKERS = 4  # MaxRequestWorkers: one child of 4 threads (a deployment may ask for more)
WSGI_PROCESSES, WSGI_THREADS = 2, 2  # mod_wsgi's daemon pool: fewer than Apache's workers, as is usual
APACHE_LATENCY_MS = 30  # the application's own time a request (a database a network hop away)
# What mod_wsgi's daemons read of the checkout: the entry point and the folder of the app it imports (copied
# where they can read them when they cannot read the checkout: worker_files.reachable).
WSGI_READS = (HERE / "wsgi_app.py", HERE.parent / "blind3")


def _blind4_runtimes() -> ModuleType:
    """Blind round 4's runtimes module (the loopback port and parent-death helpers, ``Missing``), by path:
    its folder holds other modules (``catalog``, ``server``) that must not shadow anything here."""
    spec = importlib.util.spec_from_file_location("blind4_runtimes", HERE.parent / "blind4" / "runtimes.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


runtimes = _blind4_runtimes()
Missing: type[OSError] = runtimes.Missing


def status_of(port: int, path: str, timeout: float) -> int:
    """The status a GET without the key gets (every request bounded by ``timeout``)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


# -- gunicorn ----------------------------------------------------------------------------------------
GUNICORN = """\
# gunicorn's configuration (a Python file), generated for one self-test deployment
wsgi_app = "wsgi_app:application"
chdir = {here!r}
pythonpath = {here!r}
bind = ["127.0.0.1:{port}"]
worker_class = {worker_class!r}
workers = {workers}
threads = {threads}
# keepalive: gunicorn's default, 2 s (the sync worker keeps no connection alive)
pidfile = {pidfile!r}
worker_tmp_dir = {folder!r}
errorlog = {errorlog!r}
loglevel = "warning"
accesslog = None
graceful_timeout = 10
"""


def write_gunicorn(folder: Path, port: int, sync: bool) -> Path:
    conf = folder / "gunicorn.conf.py"
    text = GUNICORN.format(
        here=str(HERE),
        port=port,
        worker_class="sync" if sync else "gthread",
        workers=4 if sync else 2,
        threads=1 if sync else 4,
        pidfile=str(folder / "gunicorn.pid"),
        folder=str(folder),
        errorlog=str(folder / "error.log"),
    )
    conf.write_text(text, encoding="utf-8")
    return conf


# -- Apache httpd ------------------------------------------------------------------------------------
APACHE = """\
# Apache httpd, generated for one self-test deployment: run with -f this file -DFOREGROUND
ServerRoot "{folder}"
ServerName 127.0.0.1
Listen 127.0.0.1:{port}
PidFile "{folder}/httpd.pid"
DefaultRuntimeDir "{folder}"
Mutex file:{folder} default
ErrorLog "{folder}/error.log"
LogLevel warn
{user}
LoadModule mpm_event_module {modules}/mod_mpm_event.so
LoadModule authz_core_module {modules}/mod_authz_core.so
LoadModule mime_module {modules}/mod_mime.so
LoadModule alias_module {modules}/mod_alias.so
LoadModule wsgi_module {modules}/mod_wsgi.so

# What httpd answers itself (a request line it refuses, TRACE, a chunked body mod_wsgi does not take, a body
# or URI too large, a daemon that does not answer) in the Error body, as a vendor configures it (§7).
TypesConfig /dev/null
AddType application/json .json
TraceEnable off
{error_pages}
Alias /errors/ "{folder}/errors/"
<Directory "{folder}/errors">
    Require all granted
</Directory>

# A small worker pool: one child process of {workers} threads. The keep-alive settings are Apache's defaults.
StartServers 1
ServerLimit 1
ThreadLimit {workers}
ThreadsPerChild {workers}
MaxRequestWorkers {workers}
MinSpareThreads 1
MaxSpareThreads {workers}
KeepAlive On
KeepAliveTimeout 5
MaxKeepAliveRequests 100
Timeout 60

# The app in mod_wsgi's daemon mode: {processes} processes of {threads} threads, Apache's workers hand requests over.
WSGIRestrictEmbedded On
WSGISocketPrefix "{folder}/wsgi"
WSGIDaemonProcess petstore processes={processes} threads={threads} home={folder} display-name=petstore-wsgi
WSGIProcessGroup petstore
WSGIApplicationGroup %{{GLOBAL}}
WSGIPassAuthorization On
WSGIScriptAlias / "{script}"
<Directory "{here}">
    <Files "wsgi_app.py">
        Require all granted
    </Files>
</Directory>
"""


def apache_binary() -> str | None:
    return shutil.which("apache2") or next((p for p in ("/usr/sbin/apache2",) if os.access(p, os.X_OK)), None)


def apache_user() -> tuple[str, str] | None:
    """Run as root, Apache's children switch to ``User``/``Group`` (it refuses to serve as root): nobody's.
    Run as anyone else, they stay that user and the directives are left out."""
    return worker_files.worker_user()


def apache_problem() -> str | None:
    """Why Apache with mod_wsgi cannot serve the app here, or None."""
    if not (APACHE_MODULES / "mod_wsgi.so").exists():
        return "apache_event_wsgi: mod_wsgi is not installed (apt-get install libapache2-mod-wsgi-py3)"
    linked = (APACHE_MODULES / "mod_wsgi.so").resolve().name.rsplit("-", 1)[-1]  # mod_wsgi.so-3.11
    ours = f"{sys.version_info.major}.{sys.version_info.minor}"
    if linked != ours:
        return f"apache_event_wsgi: mod_wsgi embeds Python {linked}, the venv is {ours}: its packages would not load"
    return None


def python_paths() -> list[str]:
    """The folders of this interpreter's packages (the venv's), for a server that runs another interpreter."""
    paths = sysconfig.get_paths()
    return list(dict.fromkeys([paths["purelib"], paths["platlib"]]))


def wsgi_path() -> list[str]:
    """mod_wsgi's daemons' ``PETSTORE_DEPLOY_PATH``: the app's folder and the venv's, or the copies of what
    the app imports from them where Apache's user reads them (``worker_files.import_path``)."""
    folders = [WSGI_READS[1], *map(Path, python_paths())]
    return [str(p) for p in worker_files.import_path(folders, ["flask_app"])]


# One line of the compliant Apache configuration a vendor could leave wrong, each: (the line, what it becomes).
WRONG_LINES = {
    "trace-on": ("TraceEnable off", "TraceEnable on"),  # httpd's default: TRACE echoed, the key in it
    "no-error-pages": ("{error_pages}", ""),  # httpd's own HTML pages for what it answers itself
}


# Where httpd's ErrorDocument pages come from: static files (``error_pages.py``), or the application's own
# route (``wsgi_app.error_page``), which httpd reaches through mod_wsgi as it reaches the API.
ERROR_PAGES = ("files", "application")


def application_error_pages(folder: Path) -> str:
    """httpd's ``ErrorDocument`` lines pointing at the application's error pages (the same statuses as the
    files'): for a chunked body mod_wsgi refuses, the page's own request is refused too, and httpd answers
    its HTML 411 (what RFC 9110 §15.5.12 lets a web server answer, in any form)."""
    error_pages.write_pages(folder)  # the Alias to the files stays, unused
    return "\n".join(f"ErrorDocument {status} /error-page/{status}" for status in error_pages.ERROR_CODES)


def write_apache(
    folder: Path, port: int, workers: int = APACHE_WORKERS, wrong_line: str = "", pages: str = "files"
) -> Path:
    owner = apache_user()
    conf = folder / "httpd.conf"
    line, instead = WRONG_LINES.get(wrong_line, ("", ""))
    pages_lines = application_error_pages(folder) if pages == "application" else error_pages.write_error_pages(folder)
    script = worker_files.reachable(WSGI_READS)[0]
    text = (APACHE.replace(line, instead) if line else APACHE).format(
        error_pages=pages_lines,
        folder=folder,
        port=port,
        user=f"User {owner[0]}\nGroup {owner[1]}" if owner else "# not root: no User/Group to switch to",
        modules=APACHE_MODULES,
        workers=workers,
        processes=WSGI_PROCESSES,
        threads=WSGI_THREADS,
        script=script,
        here=script.parent,
    )
    conf.write_text(text, encoding="utf-8")
    return conf
