"""The default gate at a network's distance, plain and over TLS, for each way writes get their connection.

    python -m benchmarks.distance                       # 0 and 100 ms, plain and TLS, 2 runs a row
    python -m benchmarks.distance --rtt-ms 100 --repeats 3 --modes default,kept-alive

Each run meets a fresh reference (an empty store, a fresh key) behind ``rtt_proxy``'s relay, which
delays the bytes half a round trip each way and a new connection a whole one; over TLS, nginx
terminates TLS behind the relay (the suite -> relay -> nginx -> reference), so that every TLS handshake
pays its round trips as it would across a network.  The modes (``transport/connections.py``):

- ``default``: every write on a connection that carried no request, opened ahead where that costs
  something (``transport/spares.py``);
- ``no-spares``: the same with nothing opened ahead (each write opens its connection when it is sent);
- ``kept-alive``: writes on kept-alive connections like reads (unsafe: a write sent as the server closes
  its connection is lost), the figure the default is measured against.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import secrets
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, fields
from functools import partial
from pathlib import Path

from benchmarks import phases, spare_counts
from benchmarks.rtt_proxy import in_thread

MODES = {
    "default": (),
    "no-spares": ("-p", "benchmarks.no_spares"),
    "kept-alive": ("-p", "benchmarks.kept_alive_writes"),
}
PLUGINS = ("-p", "benchmarks.phases", "-p", "benchmarks.spare_counts")  # what each run reads of itself

NGINX = """
worker_processes 1;
daemon off;
pid {folder}/nginx.pid;
error_log {folder}/error.log warn;
user root;
events {{ worker_connections 512; }}
http {{
    access_log off;
    client_body_temp_path {folder}/body;
    proxy_temp_path {folder}/proxy;
    fastcgi_temp_path {folder}/fastcgi;
    uwsgi_temp_path {folder}/uwsgi;
    scgi_temp_path {folder}/scgi;
    client_max_body_size 32m;
    keepalive_timeout 75s;
    keepalive_requests 10000;
    upstream reference {{ server 127.0.0.1:{upstream}; keepalive 32; }}
    server {{
        listen 127.0.0.1:{port} ssl;
        ssl_certificate {folder}/cert.pem;
        ssl_certificate_key {folder}/key.pem;
        location / {{
            proxy_pass http://reference;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $http_host;
            proxy_redirect http://$http_host/ https://$http_host/;
            proxy_request_buffering off;
            proxy_buffering off;
        }}
    }}
}}
"""


@dataclass(frozen=True)
class Run:
    """One suite run: its wall time and its process's CPU (seconds), what it sent, its verdict, its CPU by
    phase (``benchmarks.phases``) and what became of the connections it opened ahead (``benchmarks.spare_counts``)."""

    seconds: float
    cpu: float
    requests: int
    writes: int
    verdict: str
    phases: tuple[tuple[str, float], ...]
    spares: SpareCounts


@dataclass(frozen=True)
class SpareCounts:
    opened: int = 0
    taken: int = 0
    expired: int = 0
    dropped: int = 0
    own: int = 0  # requests that opened their own connection (none was ready or opening for them)
    waited: int = 0  # requests that waited for a spare still opening, or opened their own after waiting
    wait_ms: int = 0  # those waits, summed


@dataclass(frozen=True)
class Row:
    tls: bool
    rtt_ms: float
    mode: str
    runs: tuple[Run, ...]

    @property
    def scheme(self) -> str:
        return "TLS" if self.tls else "plain"

    @property
    def seconds(self) -> float:
        return statistics.median(run.seconds for run in self.runs)

    def median(self, pick: Callable[[Run], float]) -> float:
        return statistics.median(pick(run) for run in self.runs)

    def line(self, against: Row | None) -> str:
        spread = f"{min(r.seconds for r in self.runs):.1f}-{max(r.seconds for r in self.runs):.1f}"
        versus = f"**{self.seconds / against.seconds - 1:+.0%}**" if against and against is not self else ""
        opened, taken = self.median(lambda r: r.spares.opened), self.median(lambda r: r.spares.taken)
        spares = f"{opened:.0f} / {taken:.0f}" if opened else "-"
        waited = self.median(lambda r: r.spares.waited)
        waits = f"{waited:.0f} ({self.median(lambda r: r.spares.wait_ms) / 1000:.1f} s)" if opened else "-"
        requests = "/".join(str(r.requests) for r in self.runs)
        writes = "/".join(str(r.writes) for r in self.runs)
        return (
            f"| {self.scheme} | {self.rtt_ms:g} ms | {self.mode} | {self.seconds:.1f} s ({spread}) | {versus} | "
            f"{self.median(lambda r: r.cpu):.1f} s | {requests} ({writes}) | {spares} | {waits} | "
            f"{', '.join(sorted({r.verdict for r in self.runs}))} |"
        )


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def tls_front(upstream: int) -> Iterator[tuple[int, Path]]:
    """nginx terminating TLS for ``upstream`` on a loopback port; the port and the CA file (a self-signed cert)."""
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    with tempfile.TemporaryDirectory(prefix="bench-tls-") as tmp:
        folder = Path(tmp)
        subject = ["-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"]
        keys = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2"]
        made = ["-x509", *keys, "-keyout", str(folder / "key.pem"), "-out", str(folder / "cert.pem"), *subject]
        subprocess.run(["openssl", "req", *made], check=True, capture_output=True, timeout=30)
        port = _free_port()
        (folder / "nginx.conf").write_text(NGINX.format(folder=folder, port=port, upstream=upstream))
        server = subprocess.Popen([nginx, "-p", str(folder), "-c", str(folder / "nginx.conf")], stderr=subprocess.PIPE)
        try:
            _wait_listening(port, server)
            yield port, folder / "cert.pem"
        finally:
            server.terminate()
            server.wait(timeout=10)


def _wait_listening(port: int, server: subprocess.Popen[bytes]) -> None:
    import socket

    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"nginx exited: {server.stderr.read().decode() if server.stderr else ''}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
            return
        time.sleep(0.05)
    raise RuntimeError(f"nginx did not listen on {port}")


def one_run(tls: bool, rtt: float, mode: str, extra: tuple[str, ...] = ()) -> Run:
    """One default-profile suite run behind the relay (and nginx over TLS), its CPU read by phase."""
    from devtools.launcher import run_suite
    from petstore_contract.reference import BackgroundServer, build_app

    key = "dist-" + secrets.token_urlsafe(12)
    with (
        tempfile.TemporaryDirectory(prefix="bench-distance-") as tmp,
        BackgroundServer(build_app(key)) as server,
        contextlib.ExitStack() as stack,
    ):
        readings, counts = Path(tmp) / "phases.json", Path(tmp) / "spares.json"
        env = {phases.OUT_ENV: str(readings), spare_counts.OUT_ENV: str(counts)}
        target, args = server.port, [*MODES[mode], *PLUGINS, *extra]
        if tls:
            target, ca = stack.enter_context(tls_front(server.port))
            args += ["--contract-ca-bundle", str(ca)]
        port = stack.enter_context(in_thread(rtt, f"127.0.0.1:{target}"))
        run = run_suite(f"{'https' if tls else 'http'}://127.0.0.1:{port}/v1", key, *args, env=env)
        cpu, by_phase = _phases(readings)
        spares = _spare_counts(counts)
    if run.verdict != "conformant":
        facts = {k: run.summary.get(k) for k in ("reason", "unknown_writes", "connection_resets", "no_answer")}
        print(f"{run.verdict}: {facts}", flush=True)
    requests, writes = (int(run.summary.get(name, 0) or 0) for name in ("requests", "writes"))
    return Run(run.seconds, cpu, requests, writes, str(run.verdict), by_phase, spares)


def _numbers(path: Path) -> dict[str, float]:
    """A plugin's readings: a JSON object's numbers, by name (none when the run wrote no file)."""
    if not path.is_file():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        return {}
    tests = data.get("tests")
    flat = {**data, **(tests if isinstance(tests, dict) else {})}
    return {name: float(value) for name, value in flat.items() if isinstance(value, int | float)}


def _phases(path: Path) -> tuple[float, tuple[tuple[str, float], ...]]:
    """The run's process CPU seconds and their phases (``benchmarks.phases``); 0 and none if it wrote none."""
    readings = _numbers(path)
    if not readings:
        return 0.0, ()
    tests = {kind: readings[kind] for kind in ("generated", "targeted")}
    return readings["end"], tuple(phases.phases(readings, tests))


def _spare_counts(path: Path) -> SpareCounts:
    counts = _numbers(path)
    return SpareCounts(**{field.name: int(counts.get(field.name, 0)) for field in fields(SpareCounts)})


def measure(tls_modes: tuple[bool, ...], rtts: tuple[float, ...], modes: tuple[str, ...], repeats: int) -> list[Row]:
    """Every row, the runs of a (scheme, round trip) interleaved across modes so that load drifts alike."""
    rows = []
    for tls in tls_modes:
        for rtt in rtts:
            runs: dict[str, list[Run]] = {mode: [] for mode in modes}
            for _ in range(repeats):
                for mode in modes:
                    run = one_run(tls, rtt / 1000, mode)
                    runs[mode].append(run)
                    said = f"{run.seconds:.1f} s, CPU {run.cpu:.1f} s, {run.requests} requests, {run.verdict}"
                    print(f"{'TLS' if tls else 'plain'} {rtt:g} ms {mode}: {said}; spares {run.spares}", flush=True)
            rows += [Row(tls, rtt, mode, tuple(got)) for mode, got in runs.items()]
    return rows


def table(rows: list[Row]) -> str:
    """The wall-time table: each row beside the kept-alive row of its scheme and round trip."""
    head = (
        "| scheme | round trip | writes | wall time, median (range) | against kept-alive | CPU, median "
        "| requests (writes) | spares opened / used | waited for a spare (summed) | verdicts |\n" + "|---" * 10 + "|"
    )
    kept = {(row.tls, row.rtt_ms): row for row in rows if row.mode == "kept-alive"}
    return "\n".join([head, *(row.line(kept.get((row.tls, row.rtt_ms))) for row in rows)])


def phase_table(rows: list[Row], mode: str = "default") -> str:
    """The CPU seconds of each phase of the ``mode`` rows' runs (medians), one column a scheme and round trip."""
    shown = [row for row in rows if row.mode == mode and all(run.phases for run in row.runs)]
    if not shown:
        return f"(no {mode} run wrote its phases)"
    names = [name for name, _ in shown[0].runs[0].phases]
    head = "| phase, CPU s (median) | " + " | ".join(f"{r.scheme} {r.rtt_ms:g} ms" for r in shown) + " |"
    lines = [head, "|---" * (len(shown) + 1) + "|"]
    for index, name in enumerate(names):
        cells = [f"{row.median(partial(_phase, index)):.2f}" for row in shown]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines.append(
        "| **the run's process** | " + " | ".join(f"**{r.median(lambda run: run.cpu):.2f}**" for r in shown) + " |"
    )
    return "\n".join(lines)


def _phase(index: int, run: Run) -> float:
    return run.phases[index][1]


def report(rows: list[Row]) -> str:
    return table(rows) + "\n\nThe default rows' CPU by phase (`benchmarks/phases.py`):\n\n" + phase_table(rows)


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rtt-ms", default="0,100", help="round trips in ms (default 0,100)")
    parser.add_argument("--schemes", default="plain,tls", help="plain, tls or both (default)")
    parser.add_argument("--modes", default=",".join(MODES), help=f"of {', '.join(MODES)} (default all)")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args(argv)
    modes = tuple(m for m in args.modes.split(",") if m)
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        parser.error(f"unknown mode {unknown[0]!r}: one of {', '.join(MODES)}")
    tls_modes = tuple(s == "tls" for s in args.schemes.split(",") if s)
    rtts = tuple(float(x) for x in args.rtt_ms.split(",") if x)
    text = report(measure(tls_modes, rtts, modes, max(1, args.repeats)))
    print(text, flush=True)
    return text


if __name__ == "__main__":
    main()
