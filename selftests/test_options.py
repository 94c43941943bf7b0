"""One naming scheme for the plugin's options (issue 26): every one is ``--contract-<name>``, except
``--base-url``, which is pytest-base-url's (or the plugin's own where pytest-base-url is absent).

The unprefixed names from before (``--target``, ``--concurrency``, ...) are gone (issue 47): pytest
loads the plugin into every session of its environment, and a name registered twice stops a project
whose conftest defines it (``selftests/test_unrelated_session.py`` runs such a project).  Given to a
run, an old name is pytest's own one-line usage error, as any unknown option is.
A bad value is a one-line usage error, which names the option.

A retired option (``--contract-child-processes``, issue 32: the run starts no child processes) still
parses, with the values it took, and changes nothing: a run given it says so in one line on stderr.
"""

from __future__ import annotations

import argparse
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
    RETIRED,
    deprecated_names,
    deprecation_line,
    dest_of,
)

# The options' names before issue 26, as the README and the CI recipes knew them; removed in issue 47.
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
    "contract_target": "staging",
    "contract_request_timeout": "7.5",
    "contract_concurrency": "5",
    "contract_child_processes": "none",
    "contract_ca_bundle": "ca.pem",
    "contract_client_cert": "cert.pem",
    "contract_client_key": "key.pem",
    "contract_report_dir": "out",
    "contract_run_budget": "90",
    "contract_max_body_bytes": "1000",
    "contract_circuit_breaker": "4",
}
# A test module that is not the suite (no contract run): it writes every option's parsed value.
PROBE = """
import json, os
from petstore_contract.plugin.options import OPTIONS, dest_of

def test_probe(pytestconfig):
    values = {dest_of(o.flag): getattr(pytestconfig.option, dest_of(o.flag)) for o in OPTIONS}
    with open(os.environ["OPTIONS_PROBE"], "w", encoding="utf-8") as out:
        json.dump(values, out)
"""


def command_line(dest: str, name: str) -> list[str]:
    return [name, VALUES[dest]] if dest in VALUES else [name]


def probe(
    tmp_path: Path, *args: str, env: dict[str, str] | None = None, code: int = 0
) -> tuple[subprocess.CompletedProcess[str], Any]:
    """pytest on a one-test folder (not the suite) with ``args``; the options as the test saw them
    (None when the session ends with ``code`` before the test runs)."""
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
    assert done.returncode == code, done.stdout + done.stderr
    return done, json.loads(seen.read_text(encoding="utf-8")) if code == 0 else None


# -- the names --------------------------------------------------------------------------------------


def test_every_option_is_named_contract_something() -> None:
    flags = [option.flag for option in OPTIONS]
    assert all(flag.startswith(PREFIX) for flag in flags), flags
    assert "--base-url" not in flags, "--base-url is pytest-base-url's"
    assert len(set(flags)) == len(flags)
    assert {PREFIX + old.removeprefix("--") for old in OLD_NAMES} <= set(flags), "each old name has its new one"


def test_every_option_is_read_by_its_own_name() -> None:
    """Its dest is the name argparse (pytest's parser) derives from the flag: ``option.contract_circuit_breaker``."""
    parser = argparse.ArgumentParser()
    for option in OPTIONS:
        parser.add_argument(option.flag)
    assert set(vars(parser.parse_args([]))) == {dest_of(option.flag) for option in OPTIONS}
    assert set(FLAG) == {dest_of(option.flag) for option in OPTIONS}


def test_help_lists_the_contract_names_only(tmp_path: Path) -> None:
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
    assert listed == {option.flag for option in OPTIONS}
    assert not listed & OLD_NAMES
    assert re.search(r"^\s+--base-url=", done.stdout, re.MULTILINE), "pytest-base-url's --base-url is there"
    assert "deprecated" not in done.stderr


def test_each_new_name_parses_to_its_setting(tmp_path: Path) -> None:
    dests = [dest for dest in FLAG if FLAG[dest] not in RETIRED and dest in VALUES]
    given, seen = probe(tmp_path, *(word for dest in dests for word in command_line(dest, FLAG[dest])))
    assert "deprecated" not in given.stdout + given.stderr
    _, defaults = probe(tmp_path)
    assert all(seen[dest] != defaults[dest] for dest in dests), "each option was given a value of its own"


# Tier 1: the two names vendors' conftests hold most often; tier 2 every one.
TIER_1_OLD_NAMES = ("--target", "--report-dir")


@pytest.mark.parametrize(
    "old", [o if o in TIER_1_OLD_NAMES else pytest.param(o, marks=pytest.mark.tier_2) for o in sorted(OLD_NAMES)]
)
def test_an_old_name_is_an_unknown_option(old: str, tmp_path: Path) -> None:
    """No alias is left: pytest's own usage error (exit 4), the same as for any option nobody registered."""
    done, _ = probe(tmp_path, old, code=4)
    assert f"unrecognized arguments: {old}" in done.stderr, done.stderr
    assert "Traceback" not in done.stdout + done.stderr


# -- a retired option: parsed, named once, nothing changed ---------------------------------------------


@pytest.mark.tier_2
def test_the_retired_option_parses_and_is_named_once(tmp_path: Path) -> None:
    done, seen = probe(tmp_path, "--contract-child-processes", "none", "--contract-child-processes=auto")
    assert seen["contract_child_processes"] == "auto"
    assert done.stderr.splitlines().count(deprecation_line("--contract-child-processes")) == 1, done.stderr
    assert done.stderr.count("is deprecated") == 1
    workers, _ = probe(tmp_path, "-n", "2", "--contract-child-processes", "none")
    assert workers.stderr.count("is deprecated") == 1, workers.stderr


def test_the_retired_option_found_on_a_command_line() -> None:
    args = ["--contract-child-processes=none", "-k", "x", "--contract-child-processes", "auto", "--", "--target"]
    assert deprecated_names(args) == ["--contract-child-processes"]
    assert deprecated_names(["--contract-concurrency", "3", "--base-url", "http://x", "--target"]) == []


def test_the_retired_notice_line() -> None:
    assert deprecation_line("--contract-child-processes") == (
        "petstore-contract: --contract-child-processes is deprecated and changes nothing "
        "(the run starts no child processes of its own); it goes in the next release"
    )


@pytest.mark.tier_2
def test_a_run_given_the_retired_option_is_the_same_run() -> None:
    plain = run_hosted(None, None, "--contract-profile", "quick", timeout=600)
    given = run_hosted(None, None, "--contract-profile", "quick", "--contract-child-processes", "none", timeout=600)
    assert plain.verdict == given.verdict == "conformant", given.output[-3000:]
    assert (plain.exit_code, plain.count("requests")) == (given.exit_code, given.count("requests"))
    assert given.output.count("is deprecated and changes nothing") == 1


# -- bad values: one line naming the option ----------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--contract-concurrency", "0"], "--contract-concurrency must be at least 1, got 0"),
        (["--contract-concurrency", "65"], "--contract-concurrency must be at most 64, got 65"),
        (
            ["--contract-request-timeout", "0"],
            "--contract-request-timeout must be a positive number of seconds, got 0.0",
        ),
        (["--contract-run-budget", "-1"], "--contract-run-budget must be a positive number of seconds, got -1.0"),
        (["--contract-circuit-breaker", "-1"], "--contract-circuit-breaker must be at least 0, got -1"),
        (["--contract-max-body-bytes", "0"], "--contract-max-body-bytes must be at least 1, got 0"),
        (["--contract-child-processes", "2"], "--contract-child-processes must be one of auto, none, got '2'"),
        (["--contract-client-key", "pyproject.toml"], "--contract-client-key needs --contract-client-cert"),
        (["--contract-ca-bundle", "no-such.pem"], "--contract-ca-bundle: no such file: no-such.pem"),
    ],
    ids=lambda value: value[0] if isinstance(value, list) else None,
)
def test_bad_values_are_one_line_naming_the_option(args: list[str], message: str, tmp_path: Path) -> None:
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
    expected = [deprecation_line(args[0])] if args[0] in RETIRED else []
    assert lines == [*expected, f"ERROR: {message}"], done.stderr
    assert "Traceback" not in done.stdout + done.stderr


@pytest.mark.parametrize("flag", ["--contract-report-dir", pytest.param("--contract-record", marks=pytest.mark.tier_2)])
@pytest.mark.parametrize("where", ["apart", "beside"])
def test_an_existing_path_after_a_space_that_pytest_took_for_a_test_path_is_one_line(
    flag: str, where: str, tmp_path: Path
) -> None:
    """pytest roots the session at an existing path written after a space (it chooses its rootdir before it
    knows the plugin's options): at the path itself when it shares no folder but / with the working
    directory ("apart"), at the folder above both when it lies beside the project ("beside"). Either way the
    project's ini file goes unread and the session collects what it was not asked to.  One line names the
    ``=`` form instead; the ``=`` form keeps the project's root."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    elsewhere = Path("/var/tmp") if where == "apart" else tmp_path
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
        line = done.stderr.strip().splitlines()[-1]
        assert line.startswith(f"ERROR: pytest took {outside} (the value of {flag}) for a test path and rooted the")
        assert line.endswith(f": write {flag}={outside}"), line
        done = collect(f"{flag}={outside}")
        # the project's session, which holds no test: exit 5, no usage error
        assert done.returncode == 5 and "rooted the session" not in done.stdout + done.stderr, done.stderr


# -- a typo: the option probably meant ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "meant"),
    [
        ("--contract-seeed", "--contract-seed"),
        ("--contarct-profile=quick", "--contract-profile"),
        ("--base-ulr", "--base-url"),
        ("--contract-nothing-like-it", ""),
    ],
)
def test_a_mistyped_option_is_one_line_naming_the_one_meant(given: str, meant: str, tmp_path: Path) -> None:
    """A name in the suite's namespace that nobody declared is a one-line usage error naming the option
    probably meant (pytest's own says "unrecognized arguments" and no more); in a contract run and in
    another project's session alike, since the suite's names are nobody else's."""
    for folder in (str(suite_dir()), "probe"):
        args = [given] if "=" in given or given == "--contract-nothing-like-it" else [given, "1"]
        if folder == "probe":
            done, _ = probe(tmp_path, *args, code=4)
        else:
            done = subprocess.run(
                [sys.executable, "-m", "pytest", folder, "-p", "no:cacheprovider", *args],
                cwd=tmp_path,
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
            assert done.returncode == 4, done.stdout + done.stderr
        name = given.split("=", 1)[0]
        hint = f"; did you mean {meant}?" if meant else ""
        line = f"ERROR: unknown option {name}{hint} (petstore-contract --help lists the suite's options)"
        assert done.stderr.strip() == line, done.stderr
        assert "Traceback" not in done.stdout + done.stderr


def test_a_projects_own_option_is_no_typo(tmp_path: Path) -> None:
    """An option a project's conftest declares is known by the time typos are looked for, however close
    to a suite option its name is."""
    (tmp_path / "probe").mkdir()
    (tmp_path / "probe" / "conftest.py").write_text(
        "def pytest_addoption(parser):\n    parser.addoption('--contract-seeds')\n", encoding="utf-8"
    )
    probe(tmp_path, "--contract-seeds", "3", "--rootdir", str(tmp_path / "probe"), "-c", os.devnull)
