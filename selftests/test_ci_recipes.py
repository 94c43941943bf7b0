"""The CI recipes in docs/ci/ and the README's commands use options and markers that exist.

Also checks the recipes' shape: the Staging gate keeps reports/ whatever happens, promotion
waits for a green gate, Production only gets a read-only run, and keys come from secrets.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
GITHUB = ROOT / "docs" / "ci" / "github-actions.yml"
GITLAB = ROOT / "docs" / "ci" / "gitlab-ci.yml"
README = ROOT / "README.md"
VALUE_OPTIONS = {
    "-m",
    "-k",
    "-n",
    "-p",
    "-o",
    "--target",
    "--contract-profile",
    "--contract-seed",
    "--base-url",
    "--request-timeout",
    "--run-budget",
    "--max-body-bytes",
    "--circuit-breaker",
    "--ca-bundle",
    "--report-dir",
    "--junitxml",
    "--html",
    "--deselect",
    "--port",
    "--variant",
    "--fault",
}


def pytest_help(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *args, "-p", "no:cacheprovider"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout


@pytest.fixture(scope="module")
def help_text() -> str:
    return pytest_help("--help")


@pytest.fixture(scope="module")
def markers() -> set[str]:
    return set(re.findall(r"^@pytest\.mark\.(\w+)", pytest_help("--markers"), re.MULTILINE))


@pytest.fixture(scope="module")
def github() -> dict[Any, Any]:
    return yaml.safe_load(GITHUB.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def gitlab() -> dict[str, Any]:
    return yaml.safe_load(GITLAB.read_text(encoding="utf-8"))


def github_commands(workflow: dict[Any, Any]) -> Iterator[tuple[str, str]]:
    for job_name, job in workflow["jobs"].items():
        for step in job.get("steps", []):
            for line in str(step.get("run", "")).splitlines():
                yield job_name, line


def gitlab_commands(pipeline: dict[str, Any]) -> Iterator[tuple[str, str]]:
    for job_name, job in pipeline.items():
        if isinstance(job, dict):
            for key in ("before_script", "script"):
                for line in job.get(key, []):
                    yield job_name, line


def pytest_invocations(line: str) -> Iterator[list[str]]:
    """The arguments after ``pytest`` in each command of a shell line (``&&``, ``;``, ``|`` split)."""
    for command in re.split(r"&&|;|\|", line):
        words = shlex.split(command, comments=True)
        if "pytest" in words:
            yield words[words.index("pytest") + 1 :]


def options_of(args: list[str]) -> Iterator[tuple[str, str | None]]:
    """(option, value) pairs: ``--x=v``, ``--x v`` and ``-m "expr"`` forms."""
    words = iter(args)
    for word in words:
        if not word.startswith("-"):
            continue
        name, _, inline = word.partition("=")
        value = inline or (next(words, None) if name in VALUE_OPTIONS and not inline else None)
        yield name, value


def assert_known(args: list[str], help_text: str, markers: set[str], where: str) -> None:
    for name, value in options_of(args):
        short = name if name.startswith("--") else name[:2]  # -rs -> -r
        assert re.search(rf"(^|[\s,]){re.escape(short)}([\s=,]|$)", help_text, re.MULTILINE), (
            f"{where}: pytest has no option {name}"
        )
        if name == "-m" and value:
            unknown = set(re.findall(r"[A-Za-z_]\w*", value)) - {"and", "or", "not"} - markers
            assert not unknown, f"{where}: -m {value!r} names unregistered markers {unknown}"
        if name == "--target" and value:
            pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
            assert value in pyproject["tool"]["petstore_contract"]["targets"], f"{where}: no target {value!r}"


def test_recipes_run_only_existing_options(
    github: dict[Any, Any], gitlab: dict[str, Any], help_text: str, markers: set[str]
) -> None:
    found = 0
    for job, line in [*github_commands(github), *gitlab_commands(gitlab)]:
        for args in pytest_invocations(line):
            assert_known(args, help_text, markers, f"{job}: {line}")
            found += 1
    assert found == 4, "each recipe runs the Staging gate and the Production smoke run"


def test_readme_commands_use_existing_options(help_text: str, markers: set[str]) -> None:
    text = README.read_text(encoding="utf-8")
    blocks = re.findall(r"```(?:sh|bash|console)\n(.*?)```", text, re.DOTALL)
    spans = re.findall(r"`([^`\n]*pytest[^`\n]*)`", text)
    lines = [line for block in blocks for line in block.splitlines()] + spans
    checked = 0
    for line in lines:
        for args in pytest_invocations(line):
            assert_known(args, help_text, markers, f"README: {line}")
            checked += 1
    assert checked >= 8, "the README should show how to run the suite"


def test_readme_reference_server_commands_exist() -> None:
    cli = subprocess.run(
        [sys.executable, "-m", "petstore_contract.reference", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    text = README.read_text(encoding="utf-8")
    for line in re.findall(r"-m petstore_contract\.reference([^\n#]*)", text):
        for word in shlex.split(line):
            if word.startswith("--"):
                assert word.split("=")[0] in cli, f"README: petstore_contract.reference has no {word}"


def test_github_gate_keeps_reports_and_promotes_only_when_green(github: dict[Any, Any]) -> None:
    jobs = github["jobs"]
    gate = jobs["staging-gate"]
    upload = [s for s in gate["steps"] if str(s.get("uses", "")).startswith("actions/upload-artifact")]
    assert upload and upload[0]["if"] == "always()" and upload[0]["with"]["path"].rstrip("/") == "reports"
    assert jobs["promote"]["needs"] == "staging-gate"
    assert jobs["production-smoke"]["needs"] == "promote"
    env = next(s["env"] for s in gate["steps"] if "pytest" in str(s.get("run", "")))
    assert env["PETSTORE_STAGING_API_KEY"] == "${{ secrets.PETSTORE_STAGING_API_KEY }}"
    smoke = next(s for s in jobs["production-smoke"]["steps"] if "pytest" in str(s.get("run", "")))
    assert smoke["env"]["PETSTORE_PRODUCTION_API_KEY"] == "${{ secrets.PETSTORE_PRODUCTION_API_KEY }}"
    assert_read_only_production(smoke["run"])
    assert "--target staging" in next(s["run"] for s in gate["steps"] if "pytest" in str(s.get("run", "")))


def test_gitlab_gate_keeps_reports_and_promotes_only_when_green(gitlab: dict[str, Any]) -> None:
    template = gitlab[".contract-suite"]
    assert template["artifacts"]["when"] == "always" and "reports/" in template["artifacts"]["paths"]
    assert template["artifacts"]["reports"]["junit"] == "reports/junit.xml"
    assert gitlab["stages"] == ["gate", "promote", "smoke"]
    assert gitlab["staging-gate"]["extends"] == gitlab["production-smoke"]["extends"] == ".contract-suite"
    assert gitlab["promote"]["needs"] == ["staging-gate"] and gitlab["production-smoke"]["needs"] == ["promote"]
    assert "--target staging" in gitlab["staging-gate"]["script"][0]
    assert_read_only_production(gitlab["production-smoke"]["script"][0])
    assert "API_KEY" not in GITLAB.read_text(encoding="utf-8").split("stages:")[1], "keys come from CI/CD variables"


def assert_read_only_production(command: str) -> None:
    assert "--target production" in command and "--read-only" in command and "--allow-writes" not in command


def test_recipes_never_hold_a_key() -> None:
    for path in (GITHUB, GITLAB):
        for line in path.read_text(encoding="utf-8").splitlines():
            if "API_KEY" in line and ":" in line and not line.lstrip().startswith("#"):
                assert "${{ secrets." in line, f"{path.name}: {line.strip()}"
