"""One naming scheme for the plugin's options (issue 26): every one is ``--contract-<name>``, except
``--base-url``, which is pytest-base-url's.

The names from before (``--target``, ``--concurrency``, ...) still work for one release: each
parses to the same setting as its new name, and a run given one says so in exactly one line on
stderr (once per run: not again in xdist workers), from the command line, ``addopts`` or
``PYTEST_ADDOPTS``; the run's verdict and exit code are those of the same run under the new names.
A bad value is still a one-line usage error, which names the new option.

A retired option (``--contract-child-processes``, issue 32: the run starts no child processes) still
parses, with the values it took, and changes nothing: a run given it says so in one line on stderr.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from hosted import run_hosted
from petstore_contract.interface.spec import suite_dir
from petstore_contract.plugin.options import (
    FLAG,
    OPTIONS,
    PREFIX,
    RENAMED,
    RETIRED,
    deprecated_names,
    deprecation_line,
)

# The options' names before issue 26, as the README and the CI recipes knew them.
OLD_NAMES = {
    "--target",
    "--read-only",
    "--allow-writes",
    "--request-timeout",
    "--concurrency",
    "--child-processes",
    "--ca-bundle",
    "--client-cert",
    "--client-key",
    "--no-proxy-env",
    "--report-dir",
    "--run-budget",
    "--max-body-bytes",
    "--circuit-breaker",
}
# A value for each option that takes one (the others are switches); none of them is checked in a run
# that does not collect the suite.
VALUES = {
    "petstore_target": "staging",
    "petstore_timeout": "7.5",
    "petstore_concurrency": "5",
    "petstore_child_processes": "none",
    "petstore_ca_bundle": "ca.pem",
    "petstore_client_cert": "cert.pem",
    "petstore_client_key": "key.pem",
    "petstore_report_dir": "out",
    "petstore_run_budget": "90",
    "petstore_max_body": "1000",
    "petstore_trip_after": "4",
}
NOTICE = re.compile(
    r"^petstore-contract: (--[a-z-]+) is deprecated, use (--[a-z-]+) \(the old name goes in the next release\)$"
)
# A test module that is not the suite (no contract run): it writes every option's parsed value.
PROBE = """
import json, os
from petstore_contract.plugin.options import OPTIONS

def test_probe(pytestconfig):
    values = {dest: getattr(pytestconfig.option, dest) for _, dest, _ in OPTIONS}
    with open(os.environ["OPTIONS_PROBE"], "w", encoding="utf-8") as out:
        json.dump(values, out)
"""


def old_of(dest: str) -> str:
    return next(old for old, new in RENAMED.items() if new == FLAG[dest])


def command_line(dest: str, name: str) -> list[str]:
    return [name, VALUES[dest]] if dest in VALUES else [name]


def notices(stderr: str) -> list[tuple[str, str]]:
    return [(m[1], m[2]) for m in map(NOTICE.match, stderr.splitlines()) if m]


def probe(
    tmp_path: Path, *args: str, env: dict[str, str] | None = None
) -> tuple[subprocess.CompletedProcess[str], Any]:
    """pytest on a one-test folder (not the suite) with ``args``; the options as the test saw them."""
    folder = tmp_path / "probe"
    folder.mkdir(exist_ok=True)
    (folder / "test_probe.py").write_text(PROBE, encoding="utf-8")
    seen = tmp_path / "seen.json"
    seen.unlink(missing_ok=True)
    clean = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS" and not k.startswith("PETSTORE_")}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", str(folder), "-q", "-p", "no:cacheprovider", *args],
        cwd=tmp_path,
        env={**clean, "OPTIONS_PROBE": str(seen), **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done, json.loads(seen.read_text(encoding="utf-8"))


# -- the names --------------------------------------------------------------------------------------


def test_every_option_is_named_contract_something() -> None:
    flags = [flag for flag, _, _ in OPTIONS]
    assert all(flag.startswith(PREFIX) for flag in flags), flags
    assert "--base-url" not in flags, "--base-url is pytest-base-url's"
    assert len(set(flags)) == len(flags) and len({dest for _, dest, _ in OPTIONS}) == len(OPTIONS)
    assert set(RENAMED) == OLD_NAMES
    assert set(RENAMED.values()) <= set(flags) and len(set(RENAMED.values())) == len(RENAMED)
    assert all(new == PREFIX + old.removeprefix("--") for old, new in RENAMED.items())


def test_help_lists_the_new_names_and_the_old_ones_as_aliases(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--help", "-p", "no:cacheprovider"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    section = done.stdout.split("Pet Store contract suite", 1)[1].split("\n\n", 1)[0]
    listed = set(re.findall(r"(?<![-\w])(--[a-z][a-z-]*)", section))
    assert listed == {flag for flag, _, _ in OPTIONS} | OLD_NAMES
    assert re.search(r"^\s+--base-url=", done.stdout, re.MULTILINE), "pytest-base-url's --base-url is there"
    assert not notices(done.stderr)


def test_old_names_found_on_a_command_line() -> None:
    args = [
        "--concurrency=4",
        "-k",
        "x",
        "--concurrency",
        "2",
        "--contract-target",
        "a",
        "--read-only",
        "--",
        "--target",
    ]
    assert deprecated_names(args) == ["--concurrency", "--read-only"]
    assert deprecated_names(["--contract-concurrency", "3", "--base-url", "http://x", "--targets"]) == []


# -- old names: the same settings, one line each -----------------------------------------------------


def test_each_old_name_parses_as_its_new_name_with_one_notice(tmp_path: Path) -> None:
    dests = [dest for dest in FLAG if FLAG[dest] in RENAMED.values() and FLAG[dest] not in RETIRED]
    old = [word for dest in dests for word in command_line(dest, old_of(dest))]
    new = [word for dest in dests for word in command_line(dest, FLAG[dest])]
    by_new, seen_new = probe(tmp_path, *new)
    assert not notices(by_new.stderr) and "deprecated" not in by_new.stdout + by_new.stderr
    # Twice, and once as --name=value: still one line.
    by_old, seen_old = probe(tmp_path, *old, f"{old_of('petstore_concurrency')}=6")
    assert notices(by_old.stderr) == [(name, RENAMED[name]) for name in map(old_of, dests)], by_old.stderr
    assert seen_old == {**seen_new, "petstore_concurrency": 6}
    _, defaults = probe(tmp_path)
    assert all(seen_new[dest] != defaults[dest] for dest in dests), "each option was given a value of its own"


def test_old_names_from_addopts_and_pytest_addopts_are_named_once(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\naddopts = --report-dir=out --concurrency 3\n", encoding="utf-8")
    done, seen = probe(tmp_path, "--concurrency", "4", env={"PYTEST_ADDOPTS": "--run-budget 30"})
    assert notices(done.stderr) == [
        ("--report-dir", "--contract-report-dir"),
        ("--concurrency", "--contract-concurrency"),
        ("--run-budget", "--contract-run-budget"),
    ], done.stderr
    assert (seen["petstore_report_dir"], seen["petstore_concurrency"], seen["petstore_run_budget"]) == ("out", 4, 30)


def test_xdist_workers_do_not_repeat_the_notice(tmp_path: Path) -> None:
    done, seen = probe(tmp_path, "-n", "2", "--circuit-breaker", "7")
    assert done.stderr.count("is deprecated") == 1 and done.stdout.count("is deprecated") == 0, done.stderr
    assert notices(done.stderr) == [("--circuit-breaker", "--contract-circuit-breaker")]
    assert seen["petstore_trip_after"] == 7


def test_the_notice_line() -> None:
    assert deprecation_line("--concurrency") == (
        "petstore-contract: --concurrency is deprecated, use --contract-concurrency "
        "(the old name goes in the next release)"
    )


# -- a run under the old names ends as it ends under the new ones -------------------------------------

RUN_OLD = ("--concurrency", "8", "--request-timeout", "20", "--circuit-breaker", "5", "--max-body-bytes", "4000000")


def test_a_run_with_old_names_reaches_the_same_verdict_and_exit_code() -> None:
    new = tuple(RENAMED.get(word, word) for word in RUN_OLD)
    by_new = run_hosted(None, None, "--contract-profile", "quick", *new, timeout=600)
    by_old = run_hosted(None, None, "--contract-profile", "quick", *RUN_OLD, timeout=600)
    assert by_new.verdict == "conformant" and by_new.exit_code == 0, by_new.output[-3000:]
    assert (by_old.verdict, by_old.exit_code) == (by_new.verdict, by_new.exit_code), by_old.output[-3000:]
    assert by_old.summary["concurrency"] == by_new.summary["concurrency"] == 8
    old_names = [word for word in RUN_OLD if word in RENAMED]
    assert notices(by_old.output) == [(name, RENAMED[name]) for name in old_names], by_old.output[-3000:]
    assert by_old.output.count("is deprecated") == len(old_names)
    assert "is deprecated" not in by_new.output


# -- a retired option: parsed, named once, nothing changed ---------------------------------------------


def test_the_retired_option_parses_and_is_named_once(tmp_path: Path) -> None:
    done, seen = probe(tmp_path, "--contract-child-processes", "none", "--contract-child-processes=auto")
    assert seen["petstore_child_processes"] == "auto"
    assert done.stderr.splitlines().count(deprecation_line("--contract-child-processes")) == 1, done.stderr
    assert done.stderr.count("is deprecated") == 1
    old, _ = probe(tmp_path, "--child-processes", "none")
    assert old.stderr.count("is deprecated") == 1 and "changes nothing" in old.stderr, old.stderr
    workers, _ = probe(tmp_path, "-n", "2", "--contract-child-processes", "none")
    assert workers.stderr.count("is deprecated") == 1, workers.stderr


def test_the_retired_notice_line() -> None:
    assert deprecation_line("--contract-child-processes") == (
        "petstore-contract: --contract-child-processes is deprecated and changes nothing "
        "(the run starts no child processes of its own); it goes in the next release"
    )
    assert deprecation_line("--child-processes") == deprecation_line("--contract-child-processes").replace(
        "--contract-child-processes", "--child-processes"
    )


def test_a_run_given_the_retired_option_is_the_same_run() -> None:
    plain = run_hosted(None, None, "--contract-profile", "quick", timeout=600)
    given = run_hosted(None, None, "--contract-profile", "quick", "--contract-child-processes", "none", timeout=600)
    assert plain.verdict == given.verdict == "conformant", given.output[-3000:]
    assert (plain.exit_code, plain.count("requests")) == (given.exit_code, given.count("requests"))
    assert given.output.count("is deprecated and changes nothing") == 1


# -- bad values: one line naming the new option, with an old name too ----------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--concurrency", "0"], "--contract-concurrency must be at least 1, got 0"),
        (["--concurrency", "65"], "--contract-concurrency must be at most 64, got 65"),
        (["--request-timeout", "0"], "--contract-request-timeout must be a positive number of seconds, got 0.0"),
        (["--run-budget", "-1"], "--contract-run-budget must be a positive number of seconds, got -1.0"),
        (["--circuit-breaker", "-1"], "--contract-circuit-breaker must be at least 0, got -1"),
        (["--max-body-bytes", "0"], "--contract-max-body-bytes must be at least 1, got 0"),
        (["--child-processes", "2"], "--contract-child-processes must be one of auto, none, got '2'"),
        (["--client-key", "pyproject.toml"], "--contract-client-key needs --contract-client-cert"),
        (["--ca-bundle", "no-such.pem"], "--contract-ca-bundle: no such file: no-such.pem"),
        (["--contract-concurrency", "0"], "--contract-concurrency must be at least 1, got 0"),
    ],
    ids=lambda value: value[0] if isinstance(value, list) else None,
)
def test_bad_values_are_one_line_naming_the_new_option(args: list[str], message: str, tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    clean = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS" and not k.startswith("PETSTORE_")}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", str(suite_dir()), "-p", "no:cacheprovider", *args],
        cwd=tmp_path,
        env=clean,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 4, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    expected = [deprecation_line(args[0])] if args[0] in RENAMED or args[0] in RETIRED else []
    assert lines == [*expected, f"ERROR: {message}"], done.stderr
    assert "Traceback" not in done.stdout + done.stderr


@pytest.mark.parametrize("flag", ["--contract-report-dir", "--report-dir"])
def test_an_existing_path_after_a_space_that_pytest_took_for_a_test_path_is_one_line(flag: str, tmp_path: Path) -> None:
    """pytest roots the session at an existing path written after a space when that path shares no folder
    but / with the working directory (it chooses its rootdir before it knows the plugin's options): the
    project's ini file goes unread, and the session collects what it was not asked to.  One line names
    the ``=`` form instead; the ``=`` form keeps the project's root."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    elsewhere = Path("/var/tmp")
    if not elsewhere.is_dir():
        pytest.skip("no /var/tmp: no folder that shares only / with the temporary one")
    with tempfile.TemporaryDirectory(dir=elsewhere) as outside:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PETSTORE_")}

        def collect(*args: str) -> subprocess.CompletedProcess[str]:
            command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args, "--collect-only", "-q"]
            return subprocess.run(
                command, cwd=project, env=env, capture_output=True, text=True, timeout=120, check=False
            )

        done = collect(flag, outside)
        assert done.returncode == 4, done.stdout[-2000:] + done.stderr[-2000:]
        assert done.stderr.strip().splitlines()[-1] == (
            f"ERROR: pytest took {outside} (the value of {flag}) for a test path and rooted the session there: "
            f"write {flag}={outside}"
        )
        done = collect(f"{flag}={outside}")
        # the project's session, which holds no test: exit 5, no usage error
        assert done.returncode == 5 and "rooted the session" not in done.stdout + done.stderr, done.stderr
