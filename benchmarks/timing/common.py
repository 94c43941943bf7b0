"""What every part of the benchmark shares: where the checkout's files are, how long a run may take, how it logs."""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "spec" / "openapi.yaml"
PROJECT_TOML = ROOT / "spec" / "schemathesis.toml"
RESULTS = ROOT / "benchmarks" / "results.md"
BENCH = ROOT / "benchmarks" / "bench.py"  # the command line; the floor replay runs it as its worker
RUN_TIMEOUT = 1800.0


def log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)
