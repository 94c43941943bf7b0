"""Nothing the plugin does changes an unrelated pytest session in the same environment.

A vendor installs the suite beside its own project.  pytest then loads the plugin (entry point
``pytest11``) into every session of that environment, so a session of the vendor's own tests must
see exactly what it sees without the plugin: the same outcomes, the garbage collector as Python
left it (thresholds, nothing frozen), no report written, no header line, no option value changed.
That includes a project whose conftest declares options of common names (``--target``,
``--report-dir``, ``--concurrency``: the suite's own are all ``--contract-*``) and whose tests
name fixtures or markers the suite uses (``api``, ``run``, ``writes``): neither is the suite's there.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

VENDOR_TESTS = """
import gc, json, os, signal, sys

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
        "modules": sorted(sys.modules),
    }
    with open(os.environ["VENDOR_STATE"], "w") as out:
        json.dump(state, out)
"""


# What the plugin imports in a session that does not run the suite.
LIGHT = {
    "petstore_contract",
    "petstore_contract.defaults",
    "petstore_contract.interface",
    "petstore_contract.interface.files",
    "petstore_contract.plugin",
    "petstore_contract.plugin.options",
}


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
    # Start-up: the plugin imports its options and where the suite lives, nothing of the run (Schemathesis'
    # schemas, jsonschema, PyYAML, the reports: 134 modules, about 0.1-0.2 s a session, before issue 47).
    modules_with, modules_without = set(seen_with.pop("modules")), set(seen_without.pop("modules"))
    assert modules_with - modules_without <= LIGHT, sorted(modules_with - modules_without - LIGHT)
    assert "petstore_contract.plugin.options" in modules_with - modules_without, "the plugin was loaded"
    assert seen_with == seen_without, (seen_with, seen_without)
    assert seen_with["frozen"] == 0
    # Python's own disposition: the default, or "ignore" where the session was started so (nohup, a CI runner).
    assert {seen_with["sigterm"], seen_with["sighup"]} <= {str(signal.SIG_DFL), str(signal.SIG_IGN)}, seen_with
    # Python's own bytecode cache aside (the self-tests let suite runs write it: conftest.py), nothing is left.
    left = sorted(p.name for p in project.iterdir() if p.name != "__pycache__")
    assert left == ["state0.json", "state2.json", "test_vendor.py"], left


CONFTEST_WITH_COMMON_OPTIONS = """
def pytest_addoption(parser):
    group = parser.getgroup("vendor")
    group.addoption("--target", default="local", help="the vendor's own deployment name")
    group.addoption("--report-dir", default="vendor-out")
    group.addoption("--concurrency", type=int, default=1)


def pytest_report_header(config):
    return f"vendor target: {config.getoption('target')}"
"""

TESTS_WITH_COMMON_OPTIONS = """
import pytest

def test_reads_its_own_options(pytestconfig):
    assert pytestconfig.getoption("target") == "ci"
    assert pytestconfig.getoption("report_dir") == "vendor reports"
    assert pytestconfig.getoption("concurrency") == 3

def test_fails_its_own_way():
    assert "vendor" == "other"

def test_asks_for_a_fixture_it_never_defined(api):
    pass

@pytest.mark.writes
def test_marked_with_a_name_the_suite_uses():
    pass
"""


def _outcome_lines(output: str) -> list[str]:
    words = ("PASSED ", "FAILED ", "ERROR ", "SKIPPED ", "XFAIL ", "XPASS ")
    return sorted(line for line in output.splitlines() if line.startswith(words))


def test_a_project_with_its_own_target_report_dir_and_concurrency_is_unchanged(tmp_path: Path) -> None:
    """Issue 47: the suite's old unprefixed names made such a project stop before collection with
    ``argparse.ArgumentError: argument --target: conflicting option string``.  Now its own options parse
    and its tests end as they end without the plugin, under ``--strict-markers`` too."""
    project = tmp_path / "vendor"
    project.mkdir()
    (project / "conftest.py").write_text(CONFTEST_WITH_COMMON_OPTIONS, encoding="utf-8")
    (project / "test_vendor.py").write_text(TESTS_WITH_COMMON_OPTIONS, encoding="utf-8")
    (project / "pytest.ini").write_text(
        "[pytest]\naddopts = --strict-markers\nmarkers = writes: the vendor's\n", encoding="utf-8"
    )
    args = ["--target", "ci", "--report-dir", "vendor reports", "--concurrency=3"]

    def session(*plugin: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", *plugin, *args],
            cwd=project,
            env=_environment(),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    with_plugin, without = session(), session("-p", "no:petstore_contract")
    assert "conflicting option string" not in with_plugin.stdout + with_plugin.stderr, with_plugin.stderr[-2000:]
    assert with_plugin.returncode == without.returncode == 1, with_plugin.stdout[-3000:] + with_plugin.stderr
    assert _outcome_lines(with_plugin.stdout) == _outcome_lines(without.stdout), with_plugin.stdout[-3000:]
    outcomes = [line.split(" ", 1)[0] for line in _outcome_lines(with_plugin.stdout)]
    assert sorted(outcomes) == ["ERROR", "FAILED", "PASSED", "PASSED"], with_plugin.stdout[-3000:]
    assert "fixture 'api' not found" in with_plugin.stdout
    assert "vendor target: ci" in with_plugin.stdout
    assert with_plugin.stderr == without.stderr == "", with_plugin.stderr
    ours = [line for line in with_plugin.stdout.splitlines() if "petstore" in line and not line.startswith("plugins:")]
    assert ours == [], with_plugin.stdout[:2000]
    markers = [
        subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--markers", *plugin],
            cwd=project,
            env=_environment(),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        ).stdout
        for plugin in ((), ("-p", "no:petstore_contract"))
    ]
    assert markers[0] == markers[1], "the suite's markers are registered in its own runs only"


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
