"""The gate before and after the one process model (issue 32), side by side: A/B runs, interleaved.

    python benchmarks/process_ab.py BEFORE_CHECKOUT AFTER_CHECKOUT --rounds 4 --out runs.jsonl

Each checkout has its own ``.venv`` (``pip install -e '.[dev]'``).  Arms: ``before`` (the child
processes, as shipped), ``before-none`` (``--contract-child-processes none``: every test inline) and
``after`` (the stateful walks on the run's pool).  A round is one latency (0 and 100 ms in turn) and
every arm once, in shuffled order.  Each run is ``python -m pytest -q --base-url URL`` from its
checkout (the default profile, concurrency 16, the default seed) against a fresh reference server
process (``python -m petstore_contract.reference --port 0 --latency-ms MS``, empty store, a fresh
key) that was up before the clock started.  Recorded per run: wall time, verdict and requests from
``summary.json``, the 1-minute load average before the run.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ARMS: dict[str, tuple[str, tuple[str, ...]]] = {
    "before": ("BEFORE", ()),
    "before-none": ("BEFORE", ("--contract-child-processes", "none")),
    "after": ("AFTER", ()),
}


def serve(python: str, latency_ms: int, key: str, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    """A fresh reference server process; its output goes to ``log`` (a pipe nobody reads would fill up
    with its access log and stall it)."""
    command = [python, "-m", "petstore_contract.reference", "--port", "0", "--latency-ms", str(latency_ms)]
    env = {**os.environ, "PETSTORE_API_KEY": key}
    with log.open("wb") as out:
        server = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("base URL: "):
                return server, line.removeprefix("base URL: ").strip()
        time.sleep(0.1)
    server.kill()
    raise RuntimeError("the reference server did not start")


def one_run(checkout: Path, extra: tuple[str, ...], latency_ms: int) -> dict[str, Any]:
    key = "ab-" + secrets.token_urlsafe(18)
    python = str(checkout / ".venv" / "bin" / "python")
    with tempfile.TemporaryDirectory(prefix="process-ab-") as reports:
        server, url = serve(python, latency_ms, key, Path(reports) / "server.log")
        try:
            env = {k: v for k, v in os.environ.items() if not k.startswith("PETSTORE_") and k != "PYTEST_ADDOPTS"}
            env["PETSTORE_API_KEY"] = key
            command = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--base-url", url]
            # "=": a separate existing path would count as a test path and move the rootdir.
            command += [f"--contract-report-dir={reports}", *extra]
            load = os.getloadavg()[0]
            started = time.monotonic()
            done = subprocess.run(command, cwd=checkout, env=env, capture_output=True, text=True, timeout=900)
            seconds = time.monotonic() - started
            summary_path = Path(reports) / "summary.json"
            summary = json.loads(summary_path.read_text(encoding="utf-8")) if summary_path.exists() else {}
        finally:
            server.terminate()
            server.wait(timeout=10)
    return {
        "seconds": round(seconds, 2),
        "exit": done.returncode,
        "verdict": summary.get("verdict"),
        "requests": summary.get("requests"),
        "load1": round(load, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--rounds", type=int, default=4, help="rounds per latency (default 4)")
    parser.add_argument("--latencies", default="0,100")
    parser.add_argument("--out", type=Path, required=True, help="one JSON line per run (appended)")
    args = parser.parse_args(argv)
    checkouts = {"BEFORE": args.before.resolve(), "AFTER": args.after.resolve()}
    latencies = [int(ms) for ms in args.latencies.split(",")]
    rows: list[dict[str, Any]] = []
    for number in range(args.rounds):
        for latency in latencies:
            arms = list(ARMS)
            random.shuffle(arms)
            for arm in arms:
                where, extra = ARMS[arm]
                measured = one_run(checkouts[where], extra, latency)
                row = {"round": number + 1, "latency_ms": latency, "arm": arm, **measured}
                rows.append(row)
                with args.out.open("a", encoding="utf-8") as out:
                    out.write(json.dumps(row) + "\n")
                print(json.dumps(row), flush=True)
    for latency in latencies:
        for arm in ARMS:
            times = [r["seconds"] for r in rows if r["arm"] == arm and r["latency_ms"] == latency]
            median = statistics.median(times)
            print(f"{latency} ms {arm}: median {median:.2f} s of {len(times)}, {min(times)}-{max(times)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
