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
import secrets
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from benchmarks.rtt_proxy import in_thread

MODES = {
    "default": (),
    "no-spares": ("-p", "benchmarks.no_spares"),
    "kept-alive": ("-p", "benchmarks.kept_alive_writes"),
}

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
class Row:
    tls: bool
    rtt_ms: float
    mode: str
    seconds: tuple[float, ...]
    requests: tuple[int, ...]
    verdicts: tuple[str, ...]

    def line(self) -> str:
        median = statistics.median(self.seconds)
        spread = f"{min(self.seconds):.1f}-{max(self.seconds):.1f}"
        scheme = "TLS" if self.tls else "plain"
        return (
            f"| {scheme} | {self.rtt_ms:g} ms | {self.mode} | {median:.1f} s ({spread}) | "
            f"{'/'.join(map(str, self.requests))} | {', '.join(sorted(set(self.verdicts)))} |"
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


def one_run(tls: bool, rtt: float, mode: str, extra: tuple[str, ...] = ()) -> tuple[float, int, str]:
    """One default-profile suite run behind the relay (and nginx over TLS): wall seconds, requests, verdict."""
    from devtools.launcher import run_suite
    from petstore_contract.reference import BackgroundServer, build_app

    key = "dist-" + secrets.token_urlsafe(12)
    with BackgroundServer(build_app(key)) as server, contextlib.ExitStack() as stack:
        target, args = server.port, [*MODES[mode], *extra]
        if tls:
            target, ca = stack.enter_context(tls_front(server.port))
            args += ["--contract-ca-bundle", str(ca)]
        port = in_thread(rtt, f"127.0.0.1:{target}")
        run = run_suite(f"{'https' if tls else 'http'}://127.0.0.1:{port}/v1", key, *args)
    if run.verdict != "conformant":
        facts = {k: run.summary.get(k) for k in ("reason", "unknown_writes", "connection_resets", "no_answer")}
        print(f"{run.verdict}: {facts}", flush=True)
    return run.seconds, int(run.summary.get("requests", 0) or 0), str(run.verdict)


def measure(tls_modes: tuple[bool, ...], rtts: tuple[float, ...], modes: tuple[str, ...], repeats: int) -> list[Row]:
    """Every row, the runs of a (scheme, round trip) interleaved across modes so that load drifts alike."""
    rows = []
    for tls in tls_modes:
        for rtt in rtts:
            runs: dict[str, list[tuple[float, int, str]]] = {mode: [] for mode in modes}
            for _ in range(repeats):
                for mode in modes:
                    runs[mode].append(one_run(tls, rtt / 1000, mode))
                    print(f"{'TLS' if tls else 'plain'} {rtt:g} ms {mode}: {runs[mode][-1]}", flush=True)
            for mode, got in runs.items():
                rows.append(Row(tls, rtt, mode, *(tuple(x) for x in zip(*got, strict=True))))
    return rows


def table(rows: list[Row]) -> str:
    head = "| scheme | round trip | writes | wall time, median (range) | requests | verdicts |\n" + "|---" * 6 + "|"
    return "\n".join([head, *(row.line() for row in rows)])


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
    report = table(measure(tls_modes, rtts, modes, max(1, args.repeats)))
    print(report, flush=True)
    return report


if __name__ == "__main__":
    main()
