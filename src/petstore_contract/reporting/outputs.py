"""Where a run's outputs go: the report directory, JUnit, the CI job summary, the terminal's last lines.

The renderers live in ``reporting``; this module only decides paths and calls them.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from petstore_contract import reporting
from petstore_contract.core.records import RunResult

STEP_SUMMARY = "GITHUB_STEP_SUMMARY"


def report_dir(config: pytest.Config) -> Path:
    chosen = config.option.contract_report_dir
    return Path(chosen) if chosen else Path.cwd() / "reports"


def unwritable(config: pytest.Config) -> str:
    """One line naming each output the run could not write where it is told to (a read-only checkout,
    a folder of another user), before the run sends anything; "" when every one can be written."""
    wanted = [("--contract-report-dir", report_dir(config))]
    for flag, dest in (("--junitxml", "xmlpath"), ("--html", "htmlpath")):
        path = getattr(config.option, dest, None)
        if path:
            wanted.append((flag, Path(path).absolute().parent))
    refused = [f"{folder} ({flag})" for flag, folder in wanted if not can_write_in(folder)]
    if not refused:
        return ""
    return f"cannot write the reports into {', '.join(refused)}: choose a folder this user can write in"


def can_write_in(folder: Path) -> bool:
    """Whether ``folder`` can be written in, or made where it does not exist yet (nothing is made here:
    access(2) answers for a read-only file system and for the folder's permissions alike)."""
    folder = folder.absolute()
    while not folder.exists():
        if folder.parent == folder:
            return False
        folder = folder.parent
    return folder.is_dir() and os.access(folder, os.W_OK | os.X_OK)


def write_all(result: RunResult, config: pytest.Config) -> dict[str, Path]:
    """report.html, summary.md, summary.json; summary.md also appended to GitHub's job summary when set."""
    paths = reporting.write_reports(result, report_dir(config))
    step_summary = os.environ.get(STEP_SUMMARY)
    if step_summary:
        with open(step_summary, "a", encoding="utf-8") as out:
            out.write(paths["markdown"].read_text(encoding="utf-8") + "\n")
    return paths


def rewrite_junit(result: RunResult, config: pytest.Config) -> Path | None:
    """pytest's JUnit file (written in its sessionfinish) with one-line messages, the clauses' and the
    verdict's testcases and the run's facts, in the schema of the run's ``junit_family``."""
    path = getattr(config.option, "xmlpath", None)
    if not path or not Path(path).is_file():
        return None
    family = str(config.getini("junit_family") or "xunit2")
    reporting.junit.rewrite(Path(path), result, family=family)
    return Path(path)


def final_lines(result: RunResult, paths: dict[str, Path]) -> list[str]:
    lines = reporting.terminal.final_lines(result, paths)
    throttled = int(result.facts.get("throttled", 0))
    if throttled:
        waited = float(result.facts.get("throttle_wait_s", 0.0))
        note = f"the target throttled {throttled} answers (429/503 with Retry-After); the run waited {waited:.1f} s"
        lowest, configured = result.facts.get("concurrency_min"), result.facts.get("concurrency")
        if isinstance(lowest, int) and isinstance(configured, int) and lowest < configured:
            note += f"; requests in flight went down to {lowest} (of {configured})"
        lines.insert(len(lines) - 1, note)
    return lines
