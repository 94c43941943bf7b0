"""benchmarks/bench.py in seconds: its command line answers, its smallest mode (``--smoke``) runs
end to end, and the floor loop it keeps as a liveness check counts right.

Minimal on purpose: bench.py is being rewritten; only its smallest mode and its command line are
held here, not its measurements.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

import pytest

from petstore_contract.reference import BackgroundServer, build_app

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks" / "bench.py"
RESULTS = ROOT / "benchmarks" / "results.md"


def load_bench() -> ModuleType:
    if "petstore_bench" in sys.modules:
        return sys.modules["petstore_bench"]
    spec = importlib.util.spec_from_file_location("petstore_bench", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["petstore_bench"] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def bench(*args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    """The benchmark's command line, as a person would run it."""
    return subprocess.run(
        [sys.executable, str(BENCH), *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout, check=False
    )


def test_bench_help_exits_0() -> None:
    done = bench("--help", timeout=60)
    assert done.returncode == 0, done.stderr
    assert all(option in done.stdout for option in ("--smoke", "--quick", "--repeats"))


@pytest.mark.tier_2
def test_smoke_mode_runs_the_suite_once_and_writes_only_where_asked(tmp_path: Path) -> None:
    results_before = RESULTS.read_bytes() if RESULTS.exists() else None
    report = tmp_path / "smoke.md"
    done = bench("--smoke", "--out", str(report), timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "Traceback" not in done.stdout + done.stderr
    rows = [line for line in report.read_text(encoding="utf-8").splitlines() if line.startswith("| suite")]
    assert rows and "| conformant |" in rows[0], rows
    assert (RESULTS.read_bytes() if RESULTS.exists() else None) == results_before, "--smoke wrote results.md"


def test_floor_loop_sends_exactly_the_requests_asked_for() -> None:
    key = "bench-smoke-key"
    app = build_app(key)
    floor_loop = load_bench().floor_loop
    with BackgroundServer(app) as server:
        started = time.monotonic()
        seconds = floor_loop(server.base_url, key, 25)
        elapsed = time.monotonic() - started
    assert app.state.store.request_count == 25
    assert 0 < seconds <= elapsed, (seconds, elapsed)  # the loop's own time, in seconds, whatever the machine


def test_floor_loop_refuses_a_wrong_key_and_non_loopback_targets() -> None:
    floor_loop = load_bench().floor_loop
    with BackgroundServer(build_app("right-key")) as server, pytest.raises(RuntimeError, match="401"):
        floor_loop(server.base_url, "wrong-key", 3)
    with pytest.raises(ValueError, match="loopback"):
        floor_loop("http://example.com/v1", "key", 1)
