"""Small real deployments of a compliant Pet Store, each started as its users run it, on a loopback port.

Each deployment runs from a configuration generated into a temporary folder (its pid file, logs, sockets
and store there; never a system service), in a process group of its own that dies with the harness
(``PR_SET_PDEATHSIG``), and is stopped by SIGTERM to its main process, as its documentation says to stop
it (gunicorn's and Apache's graceful stop of their workers); what outlives that is killed. The server's
own log is kept for the test's failure message (``Running.log``). What each deployment is: README.md.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import pwd
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import configs

import worker_files

HERE = Path(__file__).resolve().parent
START_SECONDS = 60  # a server's start-up on a loaded machine (gunicorn's workers import Flask and SQLAlchemy)
STOP_SECONDS = 15
PROBE_SECONDS = 60
# CI (.ci/run) sets it: a deployment whose runtime is missing fails there instead of being skipped.
REQUIRED = "PETSTORE_REQUIRE_LANGUAGES"


@dataclass(frozen=True)
class Runtime:
    name: str
    probe: tuple[str, ...]  # succeeds when the runtime is installed
    install: str  # what to install when it is not


RUNTIMES = {
    "gunicorn": Runtime("gunicorn", (sys.executable, "-c", "import gunicorn, flask"), "pip install -e '.[dev]'"),
    "node": Runtime("node", ("node", "-e", "require('node:http')"), "apt-get install nodejs"),
    "apache": Runtime(
        "apache",
        (configs.apache_binary() or "apache2", "-v"),
        "apt-get install apache2 libapache2-mod-wsgi-py3",
    ),
}


@dataclass(frozen=True)
class Deployment:
    name: str
    runtime: str  # a key of RUNTIMES
    summary: str
    keep_alive: float | None  # the server's idle timeout of a kept-alive connection; None: it closes after each answer
    latency_ms: int = 0  # the WSGI app's own time a request (wsgi_app.py)
    workers: int = configs.APACHE_WORKERS  # Apache's MaxRequestWorkers (one child process of that many threads)
    wrong_line: str = ""  # a key of ``configs.WRONG_LINES``: a faulty deployment (``FAULTY``)
    error_pages: str = "files"  # Apache's ErrorDocument pages (``configs.ERROR_PAGES``): files or the application's


DEPLOYMENTS = {
    d.name: d
    for d in (
        Deployment("gunicorn_gthread", "gunicorn", "gunicorn, 2 gthread workers x 4 threads, keep-alive 2 s", 2),
        Deployment("gunicorn_sync", "gunicorn", "gunicorn, 4 sync workers: a connection per request", None),
        Deployment("node_http", "node", "Node's http server, its default keepAliveTimeout of 5 s", 5),
        *(
            Deployment(
                name,
                "apache",
                f"Apache httpd event MPM, {workers} workers, keep-alive 5 s, mod_wsgi daemon "
                f"{configs.WSGI_PROCESSES}x{configs.WSGI_THREADS}, {configs.APACHE_LATENCY_MS} ms a request",
                5,
                configs.APACHE_LATENCY_MS,
                workers,
            )
            # fewer workers than the suite keeps requests in flight (16), and as many
            for name, workers in (("apache_event_wsgi", configs.APACHE_WORKERS), ("apache_event_wsgi_16", 16))
        ),
        # mod_wsgi's default (no WSGIChunkedRequest: httpd's own 411 to a chunked body) with the error pages
        # served by the application, which ErrorDocument cannot give that 411: HTTP's refusal, in httpd's HTML.
        Deployment(
            "apache_wsgi_app_error_pages",
            "apache",
            f"Apache httpd event MPM, {configs.APACHE_WORKERS} workers, mod_wsgi daemon {configs.WSGI_PROCESSES}x"
            f"{configs.WSGI_THREADS} at its defaults (chunked bodies refused, 411), error pages from the application",
            5,
            configs.APACHE_LATENCY_MS,
            error_pages="application",
        ),
    )
}


# Faulty deployments: the compliant Apache one with one line a vendor could leave wrong, and the clause its
# answers break (the HTTP layer in front of the application: what httpd answers itself is the service's answer).
FAULTY = {
    f"apache_wsgi_{wrong}": (
        dataclasses.replace(DEPLOYMENTS["apache_event_wsgi"], name=f"apache_wsgi_{wrong}", wrong_line=wrong),
        clauses,
    )
    for wrong, clauses in (("trace-on", {"http.methods"}), ("no-error-pages", {"errors.body"}))
}


def unavailable(deployment: Deployment) -> str | None:
    """Why the deployment cannot run on this machine, or None."""
    runtime = RUNTIMES[deployment.runtime]
    hint = f"{deployment.name}: {runtime.name} is not installed ({runtime.install})"
    if shutil.which(runtime.probe[0]) is None and not os.access(runtime.probe[0], os.X_OK):
        return hint
    try:
        done = subprocess.run(runtime.probe, capture_output=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return hint
    if done.returncode != 0:
        return hint
    if deployment.runtime == "apache":
        return configs.apache_problem()
    return None


class Running:
    """One deployment on a loopback port of its own, on an empty store."""

    def __init__(self, deployment: Deployment, key: str) -> None:
        problem = unavailable(deployment)
        if problem:
            raise configs.Missing(problem)
        self.deployment = deployment
        self.folder = worker_files.folder(f"petstore-{deployment.name}-")  # Apache's children reach their sockets
        self.process: subprocess.Popen[bytes] | None = None
        self.last_log = ""
        store = self.folder / "store"
        store.mkdir()
        owner = configs.apache_user() if deployment.runtime == "apache" else None
        if owner is not None:  # mod_wsgi's daemons run as Apache's User: the store is theirs to write
            account = pwd.getpwnam(owner[0])
            os.chown(store, account.pw_uid, account.pw_gid)
        self.env = {
            **os.environ,
            "PETSTORE_API_KEY": key,
            "PETSTORE_DEPLOY_STORE": str(store),
            "PETSTORE_DEPLOY_PATH": os.pathsep.join(
                configs.wsgi_path() if deployment.runtime == "apache" else configs.python_paths()
            ),
            "PETSTORE_DEPLOY_LATENCY_MS": str(deployment.latency_ms),
        }
        for _attempt in range(5):  # a free port can be taken between the probe and the server's bind
            self.port = configs.runtimes.free_port()
            if self._start():
                return
            self.stop(keep_folder=True)
        text = self.log()
        self.stop()
        raise OSError(f"{deployment.name} did not start: {text[-600:] or 'no output'}")

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def command(self) -> list[str]:
        name = self.deployment.name
        if self.deployment.runtime == "gunicorn":
            conf = configs.write_gunicorn(self.folder, self.port, sync=name == "gunicorn_sync")
            return [sys.executable, "-m", "gunicorn", "--config", str(conf)]
        if self.deployment.runtime == "node":
            return ["node", str(HERE / "node" / "petstore.js"), str(self.port)]
        deployment = self.deployment
        conf = configs.write_apache(
            self.folder, self.port, deployment.workers, deployment.wrong_line, deployment.error_pages
        )
        return [str(configs.apache_binary()), "-f", str(conf), "-d", str(self.folder), "-DFOREGROUND"]

    def _start(self) -> bool:
        with open(self.folder / "server.log", "ab") as log:
            self.process = subprocess.Popen(
                self.command(),
                cwd=self.folder,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=self.env,
                start_new_session=True,
                preexec_fn=configs.runtimes.die_with_parent,  # started before any thread of the harness's own
            )
        return self._answering()

    def _answering(self) -> bool:
        """The server listens and its app answers (a 401 without the key: the workers have loaded it)."""
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                return False
            with contextlib.suppress(OSError):
                if configs.status_of(self.port, "/v1/pets", timeout=PROBE_SECONDS) == 401:
                    return True
            time.sleep(0.1)
        return False

    def log(self) -> str:
        """The server's own log: its output, and its error log (Apache's, mod_wsgi's, gunicorn's)."""
        parts = []
        for name in ("server.log", "error.log"):
            path = self.folder / name
            if path.exists():
                text = path.read_text(encoding="utf-8", errors="replace").strip()
                parts.append(f"--- {name} ---\n{text}" if text else f"--- {name}: empty ---")
        return "\n".join(parts)

    def stop(self, keep_folder: bool = False) -> int | None:
        """Stop the server (SIGTERM to its main process); its exit status, None when it had to be killed."""
        status = None
        if self.process is not None:
            if self.process.poll() is None:
                self.process.send_signal(signal.SIGTERM)
            try:
                status = self.process.wait(STOP_SECONDS)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(5)
            with contextlib.suppress(ProcessLookupError, PermissionError):  # workers that outlive their parent
                os.killpg(self.process.pid, signal.SIGKILL)
        self.last_log = self.log()
        if not keep_folder:
            shutil.rmtree(self.folder, ignore_errors=True)
        return status


@contextlib.contextmanager
def deployed(name: str, key: str) -> Iterator[Running]:
    running = Running(DEPLOYMENTS[name] if name in DEPLOYMENTS else FAULTY[name][0], key)
    try:
        yield running
    finally:
        running.stop()
