"""``python -m benchmarks.phases`` (docs/performance.md, "The run's CPU, by phase") runs the suite once and
prints its CPU by phase: every phase a row, the phases adding up to the run's process."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PHASES = ("start-up", "pytest's plugins", "collection", "the generated tests", "the targeted tests", "the verdict")


def test_the_phases_of_a_small_run_add_up_to_its_process() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.phases", "--", "-k", "test_orders", "--contract-profile", "quick"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert re.match(r"Conformant: .* \(exit 0\); wall \d+\.\d\d s\n", done.stdout), done.stdout
    rows = dict(re.findall(r"^\| ([^|]+?) \| \**(\d+\.\d\d)\** \|", done.stdout, re.MULTILINE))
    phases = [next(float(v) for k, v in rows.items() if k.startswith(name)) for name in PHASES]
    total = float(rows["**the run's process**"])
    assert all(seconds >= 0 for seconds in phases) and total > 0, done.stdout
    assert abs(sum(phases) - total) <= 0.035, done.stdout  # the same readings, each row rounded to 0.01 s
    assert phases[2] > 0.1, "collection builds the suite's tests"
