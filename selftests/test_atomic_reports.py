"""A kill while the reports are written never leaves a truncated report (issue 31).

A CI system ends a job that outlives its time with SIGKILL, at whatever moment.  Each report file is
written to a temporary file beside it and renamed over it (``petstore_contract.atomic``), so after a
kill at any point every report is either the previous run's complete file or the new complete one.
The kill comes from outside the product: the plugin ``selftests/plugins/kill_writes.py`` (loaded with
``-p``) makes the run SIGKILL itself at the N-th byte written into the report folder, or just before
or after its N-th rename there.  A first, whole run counts the bytes and renames.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema

from devtools.launcher import ROOT, suite_command

PLUGINS = Path(__file__).resolve().parent / "plugins"
SCHEMA = ROOT / "src" / "petstore_contract" / "reporting" / "summary.schema.json"
REPORTS = ("report.html", "summary.md", "summary.json", "junit.xml")
# A small, whole run of the suite against the embedded reference: its reports are what matters here.
ARGS = ("--contract-profile", "quick", "-k", "test_read")


def _run(reports: Path, **plugin_env: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PETSTORE_", "PYTEST_"))}
    env |= {"PYTHONPATH": str(PLUGINS), "KILL_WRITES_DIR": str(reports), **plugin_env}
    command = [*suite_command(reports, None, ARGS), "-p", "kill_writes"]
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)


def _whole(name: str, data: bytes) -> str:
    """Why ``data`` is not a whole ``name`` ("" when it is)."""
    text = data.decode("utf-8")
    try:
        if name == "summary.json":
            jsonschema.validate(json.loads(text), json.loads(SCHEMA.read_text(encoding="utf-8")))
        elif name == "junit.xml":
            ET.fromstring(data)
        elif name == "report.html" and not text.rstrip().endswith("</html>"):
            return "does not end with </html>"
        elif name == "summary.md" and not text.rstrip().endswith("machine-readable: `summary.json`."):
            return "does not end with its last line"
    except (ValueError, ET.ParseError, jsonschema.ValidationError) as exc:
        return f"{type(exc).__name__}: {str(exc)[:200]}"
    return ""


def test_a_kill_at_any_point_of_report_writing_leaves_whole_reports(tmp_path: Path, whole_self_proof: bool) -> None:
    reports = tmp_path / "reports"
    counted = tmp_path / "count.json"
    first = _run(reports, KILL_WRITES_COUNT=str(counted))
    assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-2000:]
    previous = {name: (reports / name).read_bytes() for name in REPORTS}
    totals = json.loads(counted.read_text(encoding="utf-8"))
    assert totals["renames"] == len(REPORTS) and totals["bytes"] == sum(map(len, previous.values()))
    sizes = [len(previous[name]) for name in REPORTS]  # the order the run writes them in
    starts = [sum(sizes[:i]) for i in range(len(sizes))]
    # The first byte, the middle of each file, and the moment before each rename (its bytes all written).
    points = ["byte:1", *(f"byte:{s + n // 2}" for s, n in zip(starts, sizes, strict=True))]
    points += [f"before:{n}" for n in range(1, len(REPORTS) + 1)]
    if not whole_self_proof:  # tier 1: one kill, in the middle of the last file (the others renamed)
        points = [points[len(REPORTS)]]
    replaced: set[str] = set()
    for point in points:
        for name, data in previous.items():  # every kill starts from the previous run's reports
            (reports / name).write_bytes(data)
        for stray in reports.glob(".*.partial"):
            stray.unlink()
        killed = _run(reports, KILL_WRITES_AT=point)
        assert killed.returncode == -signal.SIGKILL, f"{point}: {killed.returncode}\n{killed.stdout[-1500:]}"
        for name in REPORTS:
            data = (reports / name).read_bytes()
            if data != previous[name]:
                assert not _whole(name, data), f"kill at {point}: {name} {_whole(name, data)}"
                replaced.add(name)
        assert sorted(p.name for p in reports.iterdir() if not p.name.startswith(".")) == sorted(REPORTS)
    # The kills did reach into the writing: each report was the new one after some kill.
    assert replaced == set(REPORTS), replaced
    shutil.rmtree(reports, ignore_errors=True)
