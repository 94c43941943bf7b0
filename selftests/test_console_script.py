"""``petstore-contract`` works from any directory in the README's (editable) install, says which judge it
is, and every subcommand has ``--help``.

Issue 47: from another directory the editable install's console script ended in ``module or package not
found: petstore_contract.suite`` (exit 4): the wheel's force-include makes tests/ the package's ``suite``,
which an editable install never does.  ``--version`` printed pytest's version only; ``verify --help`` and
``replay --help`` were usage errors.  The installed wheel's own runs are ``selftests/test_wheel.py``'s.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from petstore_contract import __version__
from petstore_contract.reporting.readback import load

SCRIPT = Path(sys.executable).parent / "petstore-contract"


def cli(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PETSTORE_", "PYTEST_"))}
    return subprocess.run(
        [str(SCRIPT), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def test_version_names_the_suite_and_its_judge(tmp_path: Path) -> None:
    done = cli("--version", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        f"petstore-contract {__version__} (Schemathesis {metadata.version('schemathesis')}, "
        f"Hypothesis {metadata.version('hypothesis')}, pytest {metadata.version('pytest')})"
    )


@pytest.mark.parametrize("command", ["", "compare", "certify", "verify", "replay"])
def test_every_subcommand_has_help(command: str, tmp_path: Path) -> None:
    done = cli(*([command] if command else []), "--help", cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "usage:" in done.stdout and "Traceback" not in done.stderr
    if command:
        assert f"petstore-contract {command}" in done.stdout
    else:
        assert all(f"petstore-contract {name}" in done.stdout for name in ("compare", "certify", "verify", "replay"))


def test_the_editable_install_runs_the_suite_from_another_directory(tmp_path: Path) -> None:
    """From an empty directory, a run of one test ends conformant, and its reports name the judge's versions."""
    elsewhere = tmp_path / "somewhere else"
    elsewhere.mkdir()
    reports = elsewhere / "reports"
    done = cli(
        *("-k", "test_orders", "--contract-profile", "quick", f"--contract-report-dir={reports}"),
        cwd=elsewhere,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "module or package not found" not in done.stdout + done.stderr
    summary = load(reports / "summary.json")  # checked against its schema too
    assert summary["verdict"] == "conformant"
    for name in ("schemathesis", "hypothesis", "pytest"):
        assert summary[f"{name}_version"] == metadata.version(name), name
    html = (reports / "report.html").read_text(encoding="utf-8")
    assert "Schemathesis version" in html and metadata.version("schemathesis") in html
    assert json.loads((reports / "summary.json").read_text(encoding="utf-8"))["schema_version"] == 5
