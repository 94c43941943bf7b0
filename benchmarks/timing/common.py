"""What every part of the benchmark shares: where things are, its limits, how it logs."""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "spec" / "openapi.yaml"
PROJECT_TOML = ROOT / "spec" / "schemathesis.toml"
RESULTS = ROOT / "benchmarks" / "results.md"
BENCH = ROOT / "benchmarks" / "bench.py"  # the command line; the floor replay runs it as its worker
KEY_ENV = "PETSTORE_API_KEY"
RUN_TIMEOUT = 1800.0
REQUEST_TIMEOUT = 30.0
LOOPBACK = ("127.0.0.1", "::1", "localhost")
WRITE_METHODS_EXCLUDED = ("GET", "HEAD", "OPTIONS")
NOT_REPLAYED = {"host", "content-length", "connection", "keep-alive", "transfer-encoding"}
PET_PATH = re.compile(r"^(.*/pets/)([^/?]+)$")
TARGETS = {0: None, 20: 10.0, 100: 30.0}  # latency ms -> the ceiling for the default gate
EMBEDDED_TARGET = 5.0
FLOOR_FACTOR = 2.0


def log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def require_loopback(base_url: str) -> None:
    if urlsplit(base_url).hostname not in LOOPBACK:
        raise ValueError(f"the benchmark only talks to loopback servers, not {base_url}")
