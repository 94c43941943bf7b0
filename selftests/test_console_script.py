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
from petstore_contract.core import replay
from petstore_contract.reporting.readback import load

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = Path(sys.executable).parent / "petstore-contract"


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PETSTORE_", "PYTEST_", "HYPOTHESIS_"))}
    return {**env, **extra}


def cli(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), *args], cwd=cwd, env=clean_env(), capture_output=True, text=True, timeout=timeout, check=False
    )


def shell(line: str, *, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``line`` as a user pastes it into a POSIX shell."""
    return subprocess.run(
        ["sh", "-c", line], cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False
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
    # a guest that leaves nothing: its reports only (no .hypothesis/), no warning of its own
    assert sorted(p.name for p in elsewhere.iterdir()) == ["reports"]
    assert "warnings summary" not in done.stdout and "Warning" not in done.stdout + done.stderr
    summary = load(reports / "summary.json")  # checked against its schema too
    assert summary["verdict"] == "conformant"
    for name in ("schemathesis", "hypothesis", "pytest"):
        assert summary[f"{name}_version"] == metadata.version(name), name
    html = (reports / "report.html").read_text(encoding="utf-8")
    assert "Schemathesis version" in html and metadata.version("schemathesis") in html
    assert json.loads((reports / "summary.json").read_text(encoding="utf-8"))["schema_version"] == 5


def test_help_puts_the_suites_options_first(tmp_path: Path) -> None:
    """``--help`` begins with what a first-time user needs: the suite's options, the key's variable, the
    named targets a run reads (the checkout's, in an editable install, from any directory) and examples;
    pytest's own help follows.  The wheel's, with no targets or a project's own: ``test_wheel.py``."""
    done = cli("--help", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    suite, _, pytest_help = done.stdout.partition("pytest's own options follow")
    assert "positional arguments" not in suite and "positional arguments" in pytest_help
    for needed in ("PETSTORE_API_KEY", "--base-url URL", "--contract-target NAME", "--contract-seed SEED"):
        assert needed in suite, needed
    assert f"named targets (--contract-target NAME), from {ROOT / 'pyproject.toml'}:" in suite
    assert "  staging: https://staging.petstore.example/v1 (key in PETSTORE_STAGING_API_KEY, read-write)" in suite
    assert "PETSTORE_API_KEY=... petstore-contract --base-url https://staging.example/v1" in suite
    assert "deprecated" not in suite, "a retired option is not offered"
    assert suite.index("PETSTORE_API_KEY") < 2000, "within the first screen"


def replay_line(reports: Path) -> str:
    return str(load(reports / "summary.json")["replay"])


@pytest.mark.parametrize("how", ["the README's command in the checkout", "the console script on PATH"])
def test_the_replay_line_runs_where_the_report_was_made(how: str, tmp_path: Path) -> None:
    """The report's "Run it again" line, pasted into a shell where the run was made, runs the suite with
    the same seed and profile: after the README's ``.venv/bin/python -m pytest`` in the checkout (an
    editable install: the suite is tests/, no package petstore_contract.suite), and after
    ``petstore-contract`` found on PATH (an activated environment) from another directory."""
    reports = tmp_path / "first"
    selection = ["-k", "test_orders", "--contract-profile", "quick", "--contract-seed", "4242"]
    if how.startswith("the README"):
        # as the README has it: the environment not activated (its scripts not on PATH)
        path = os.pathsep.join(d for d in os.environ["PATH"].split(os.pathsep) if Path(d) != SCRIPT.parent)
        cwd, env = ROOT, clean_env(PATH=path)
        done = subprocess.run(
            [sys.executable, "-m", "pytest", *selection, f"--contract-report-dir={reports}"],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        expected = replay.single(str(SCRIPT.relative_to(ROOT))) if SCRIPT.is_relative_to(ROOT) else str(SCRIPT)
    else:
        cwd, env = tmp_path, clean_env(PATH=f"{SCRIPT.parent}{os.pathsep}{os.environ['PATH']}")
        done = shell(f"petstore-contract {' '.join(selection)} --contract-report-dir={reports}", cwd=cwd, env=env)
        expected = "petstore-contract"
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    line = replay_line(reports)
    assert line == f"{expected} --contract-profile quick --contract-seed 4242", line
    again = shell(f"{line} -k test_orders --contract-report-dir={tmp_path / 'again'}", cwd=cwd, env=env)
    assert again.returncode == 0, line + "\n" + again.stdout[-3000:] + again.stderr[-2000:]
    assert replay_line(tmp_path / "again") == line, "the replay asks the same questions"
