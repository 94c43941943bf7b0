"""The four languages' runtimes (Debian's packages): where each is, how a server of it starts.

Each server is its language's own process on a loopback port the harness picks: Go's binary (built
once from ``go/`` into a cache folder named after the sources' hash, standard library only, no
network), PHP's built-in server with ``php/router.php``, Ruby running ``ruby/app.rb`` (Sinatra on
WEBrick), Perl running ``perl/app.pl`` (Mojolicious::Lite's ``daemon``). A missing runtime raises
``Missing`` naming the Debian package, so the harness fails with one line and exit 2.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import hashlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
START_SECONDS = 30  # a runtime's own start-up, generous for a loaded machine (Mojolicious and Sinatra load in ~1 s)
BUILD_SECONDS = 300


class Missing(OSError):
    """A language runtime (or one of its libraries) is not installed."""


@dataclass(frozen=True)
class Language:
    name: str
    packages: tuple[str, ...]  # Debian's, what `.ci/run` installs
    probe: tuple[str, ...]  # a command that succeeds when the runtime and its libraries are there


LANGUAGES = {
    "go": Language("go", ("golang-go",), ("go", "version")),
    "php": Language("php", ("php-cli",), ("php", "-r", "exit(function_exists('json_encode') ? 0 : 1);")),
    "ruby": Language(
        "ruby", ("ruby-sinatra", "ruby-webrick"), ("ruby", "-e", "require 'sinatra/base'; require 'webrick'")
    ),
    "perl": Language("perl", ("libmojolicious-perl",), ("perl", "-MMojolicious::Lite", "-e", "1")),
}


def available(language: str) -> str | None:
    """None when the language's runtime and libraries are installed, else what to install."""
    spec = LANGUAGES[language]
    hint = f"{spec.name} is not installed (Debian: apt-get install {' '.join(spec.packages)})"
    if shutil.which(spec.probe[0]) is None:
        return hint
    try:
        done = subprocess.run(spec.probe, capture_output=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return hint
    return None if done.returncode == 0 else hint


def go_binary() -> Path:
    """The Go server, built once per source content: later starts (and parallel ones) reuse it."""
    sources = sorted((HERE / "go").glob("*"))
    digest = hashlib.sha256(b"".join(p.name.encode() + p.read_bytes() for p in sources))
    version = subprocess.run(["go", "version"], capture_output=True, text=True, timeout=60, check=True).stdout
    digest.update(version.encode())
    folder = Path(tempfile.gettempdir()) / f"petstore-blind4-go-{digest.hexdigest()[:16]}"
    folder.mkdir(exist_ok=True)
    binary = folder / "petstore"
    with open(folder / "build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one build; the other starts wait for it
        if not binary.exists():
            env = {
                **os.environ,
                # the build's caches in the folder, the module proxy off: no network, no user state
                "GOCACHE": str(folder / "cache"),
                "GOPATH": str(folder / "gopath"),
                "GOPROXY": "off",
                "GOTOOLCHAIN": "local",
                "GOFLAGS": "",
                "GO111MODULE": "on",
            }
            command = ["go", "build", "-o", str(folder / "petstore.new"), "."]
            done = subprocess.run(
                command, cwd=HERE / "go", env=env, capture_output=True, text=True, timeout=BUILD_SECONDS
            )
            if done.returncode != 0:
                raise Missing(f"go build failed: {done.stderr.strip().splitlines()[-1:]}")
            (folder / "petstore.new").rename(binary)
    return binary


def command(language: str, port: int) -> list[str]:
    if language == "go":
        return [str(go_binary()), str(port)]
    if language == "php":
        return ["php", "-S", f"127.0.0.1:{port}", str(HERE / "php" / "router.php")]
    if language == "ruby":
        return ["ruby", str(HERE / "ruby" / "app.rb"), str(port)]
    return ["perl", str(HERE / "perl" / "app.pl"), "daemon", "-m", "production", "-l", f"http://127.0.0.1:{port}"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


LIBC = ctypes.CDLL("libc.so.6", use_errno=True)  # loaded here: the child between fork and exec only calls it


def die_with_parent() -> None:
    """In the child: the kernel sends SIGTERM to the server when the harness dies (even by SIGKILL)."""
    LIBC.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class Running:
    """One language server on a loopback port, in a process group of its own (PHP's workers included)."""

    def __init__(self, language: str, flags: list[str], key: str, preload: int, port: int) -> None:
        if shutil.which(LANGUAGES[language].probe[0]) is None:  # the library check waits for a failed start
            raise Missing(str(available(language)))
        self.state = Path(tempfile.mkdtemp(prefix=f"blind4-{language}-"))
        env = {
            **os.environ,
            "PETSTORE_API_KEY": key,
            "BLIND4_FLAGS": ",".join(flags),
            "BLIND4_PRELOAD": str(preload),
            "BLIND4_STATE": str(self.state),
            "PHP_CLI_SERVER_WORKERS": "4",  # the built-in server answers one request at a time otherwise
            "MOJO_LOG_LEVEL": "fatal",
        }
        self.process: subprocess.Popen[bytes] | None = None
        for _attempt in range(5):  # a free port can be taken between the probe and the server's bind
            self.port = port or free_port()
            log = open(self.state / "server.log", "wb")  # noqa: SIM115 (the child writes it while it runs)
            self.process = subprocess.Popen(
                command(language, self.port),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
                preexec_fn=die_with_parent,  # the harness starts the server before any thread of its own
            )
            log.close()
            if self._listening():
                return
            self.stop(keep_state=True)
            if port:
                break
        lines = (self.state / "server.log").read_text(errors="replace").strip().splitlines()
        self.stop()
        problem = available(language)  # a library missing (Sinatra, Mojolicious) names its Debian package
        if problem:
            raise Missing(problem)
        raise OSError(f"{language} server did not start: {lines[-1:] or 'no output'}")

    def _listening(self) -> bool:
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                return False
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port), timeout=1):
                return True
            time.sleep(0.05)
        return False

    def stop(self, keep_state: bool = False) -> None:
        if self.process is not None and self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)  # the server's own group: PHP's workers too
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(5)
        if self.process is not None:  # workers that outlive the group leader
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, signal.SIGKILL)
        if not keep_state:
            shutil.rmtree(self.state, ignore_errors=True)
