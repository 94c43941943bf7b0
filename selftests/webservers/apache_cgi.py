"""Apache httpd running the Pet Store itself, as a CGI script (mod_cgid, the event MPM), from a generated config.

The classic small deployment: no application server, httpd starts ``cgi_petstore.py`` for every request
(``ScriptAlias /v1``), over one SQLite file.  What httpd answers itself gets the Error body through
``ErrorDocument`` (``httpd_pages``), as in the reverse-proxy config (``apache.py``); the lines only a CGI
deployment has are ``CGIPassAuth On`` (httpd hands a script no ``Authorization`` without it) and the script
reading the body it refuses (``PETSTORE_CGI_DRAIN``).  Each fault is one of them left wrong (``FAULTS``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from apache import BASE, MODULES, load_modules
from foreground import ForegroundServer, installed

import error_pages
from worker_files import reachable, worker_user

HERE = Path(__file__).resolve().parent
SCRIPT_READS = (HERE / "cgi_petstore.py", HERE.parent / "blind3")
CONFIG = (
    BASE
    + """
ScriptSock {folder}/cgid.sock
ScriptAlias /v1 {folder}/cgi/petstore.cgi
<Directory {folder}/cgi>
    Require all granted
    {pass_auth}
    SetEnv PETSTORE_API_KEY {key}
    SetEnv PETSTORE_CGI_STORE {folder}/store
    SetEnv PETSTORE_CGI_DRAIN {drain}
</Directory>
"""
)
# The script httpd runs: the Pet Store module of this folder (the standard library and blind round 3's domain
# rules are all it imports: ``SCRIPT_READS``, copied where httpd's user reads them when it cannot read the
# checkout), in the system's interpreter: httpd's user may not reach this process's (a venv under /root).
SYSTEM_PYTHON = "/usr/bin/python3"
SCRIPT = """#!{python}
import runpy
runpy.run_path({module!r}, run_name="__main__")
"""
# One line a vendor could leave, each: what it changes in the compliant config.
FAULTS = {
    "no-drain": "the script answers a refusal without reading the body (PETSTORE_CGI_DRAIN 0)",
    "no-pass-auth": "no CGIPassAuth On: the script never sees the Authorization header",
    "trace-on": "TraceEnable on (httpd's default): TRACE echoed, the key in it",
}


def _python() -> str:
    return SYSTEM_PYTHON if os.access(SYSTEM_PYTHON, os.X_OK) else sys.executable


def config(folder: Path, port: int, key: str, fault: str = "") -> str:
    for sub in ("cgi", "store"):
        (folder / sub).mkdir(exist_ok=True)
    (folder / "store").chmod(0o777)  # the SQLite file and its journal, written by httpd's user
    (folder / "cgi").chmod(0o755)
    script = folder / "cgi" / "petstore.cgi"
    module = reachable(SCRIPT_READS)[0]
    script.write_text(SCRIPT.format(python=_python(), module=str(module)), "utf-8")
    script.chmod(0o755)
    owner = worker_user()
    return CONFIG.format(
        folder=folder,
        port=port,
        modules=MODULES,
        more_modules=load_modules("cgid"),
        user=f"User {owner[0]}\nGroup {owner[1]}" if owner else "",
        key=key,
        trace="on" if fault == "trace-on" else "off",
        pass_auth="" if fault == "no-pass-auth" else "CGIPassAuth On",
        drain="0" if fault == "no-drain" else "1",
        error_pages=error_pages.write_error_pages(folder),
    )


class ApacheCgi(ForegroundServer):
    """httpd serving ``cgi_petstore.py`` under ``/v1`` with ``key``, with one fault or none."""

    def __init__(self, key: str, fault: str = "") -> None:
        def write(folder: Path, port: int) -> Path:
            conf = folder / "httpd.conf"
            conf.write_text(config(folder, port, key, fault), encoding="utf-8")
            conf.chmod(0o600)  # it holds the key (SetEnv); httpd reads it as it starts
            return conf

        super().__init__(
            "apache2",
            installed("apache2"),
            write,
            lambda conf: ["-f", str(conf), "-DFOREGROUND"],
            lambda folder: {"APACHE_RUN_DIR": str(folder), "APACHE_LOCK_DIR": str(folder)},
        )
