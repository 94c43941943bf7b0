"""Nothing the plugin does changes an unrelated pytest session in the same environment.

A vendor installs the suite beside its own project.  pytest then loads the plugin (entry point
``pytest11``) into every session of that environment, so a session of the vendor's own tests must
see exactly what it sees without the plugin: the same outcomes, the garbage collector as Python
left it (thresholds, nothing frozen), no report written, no header line, no option value changed.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

VENDOR_TESTS = """
import gc, json, os, signal

def test_passes():
    assert 1 + 1 == 2

def test_fails():
    assert "vendor" == "other"

def test_records_the_interpreter(pytestconfig):
    state = {
        "threshold": list(gc.get_threshold()),
        "frozen": gc.get_freeze_count(),
        "tbstyle": pytestconfig.option.tbstyle,
        "base_url": getattr(pytestconfig.option, "base_url", None),
        # The stop signals' handlers are a contract run's only (issue 31): a vendor's session keeps Python's.
        "sigterm": str(signal.getsignal(signal.SIGTERM)),
        "sighup": str(signal.getsignal(signal.SIGHUP)),
    }
    with open(os.environ["VENDOR_STATE"], "w") as out:
        json.dump(state, out)
"""


def _session(project: Path, *plugin: str) -> tuple[subprocess.CompletedProcess[str], dict[str, object]]:
    state = project / f"state{len(plugin)}.json"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", *plugin, str(project)],
        cwd=project,
        env={**_environment(), "VENDOR_STATE": str(state)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return done, json.loads(state.read_text(encoding="utf-8"))


def _environment() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if not k.startswith(("PETSTORE_", "PYTEST_"))}


def _outcomes(output: str) -> list[str]:
    return sorted(line for line in output.splitlines() if line.startswith(("PASSED ", "FAILED ")))


def test_a_vendor_session_is_the_same_with_and_without_the_plugin(tmp_path: Path) -> None:
    project = tmp_path / "vendor"
    project.mkdir()
    (project / "test_vendor.py").write_text(VENDOR_TESTS, encoding="utf-8")
    with_plugin, seen_with = _session(project)
    without, seen_without = _session(project, "-p", "no:petstore_contract")
    # pytest's own "plugins:" line names every installed plugin; the plugin itself adds no line.
    ours = [line for line in with_plugin.stdout.splitlines() if "petstore" in line and not line.startswith("plugins:")]
    assert ours == [], with_plugin.stdout[:2000]
    assert with_plugin.returncode == without.returncode == 1
    assert _outcomes(with_plugin.stdout) == _outcomes(without.stdout)
    assert len(_outcomes(with_plugin.stdout)) == 3
    assert seen_with == seen_without, (seen_with, seen_without)
    assert seen_with["frozen"] == 0
    assert seen_with["sigterm"] == seen_with["sighup"] == str(signal.SIG_DFL)
    # Python's own bytecode cache aside (the self-tests let suite runs write it: conftest.py), nothing is left.
    left = sorted(p.name for p in project.iterdir() if p.name != "__pycache__")
    assert left == ["state0.json", "state2.json", "test_vendor.py"], left


HOST_TESTS = """
import json, os

def test_records_the_host_session(pytestconfig):
    state = {"tbstyle": pytestconfig.option.tbstyle, "key_in_environment": "PETSTORE_API_KEY" in os.environ}
    with open(os.environ["VENDOR_STATE"], "w") as out:
        json.dump(state, out)

def test_fails_in_the_users_style():
    assert "vendor" == "other"
"""


def test_a_contract_run_leaves_the_host_session_alone(tmp_path: Path) -> None:
    """A vendor's tests in the same session as the suite see the user's --tb and no key in os.environ."""
    project = tmp_path / "host"
    project.mkdir()
    (project / "test_host.py").write_text(HOST_TESTS, encoding="utf-8")
    state = tmp_path / "state.json"
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "--tb=line",
            "-q",
            "tests/test_orders.py",
            str(project / "test_host.py"),
            f"--contract-report-dir={tmp_path / 'reports'}",
        ],
        cwd=root,
        env={**_environment(), "VENDOR_STATE": str(state)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert json.loads(state.read_text(encoding="utf-8")) == {"tbstyle": "line", "key_in_environment": False}
    # --tb=line: the vendor's failure is one line with its place, not a native traceback.
    assert "test_host.py:10: AssertionError" in done.stdout, done.stdout[-3000:]
    assert "Traceback (most recent call last)" not in done.stdout, done.stdout[-3000:]
