"""The CI recipes in docs/ci/ and the commands of the README and docs/ use options and markers that exist.

Also checks the recipes' shape: the Staging gate keeps reports/ whatever happens and publishes
reports/junit.xml, Production gets read-only runs only (the baseline before promotion, the smoke
run after), promotion waits for a passing gate and for ``petstore-contract compare`` to find no
regression of Staging against the Production baseline, and keys come from secrets.  The recipes'
shell is run with a stand-in ``python`` that exits with chosen codes: 0 promotes, 1 blocks, 6
(inconclusive) is retried once and then fails the job (GitHub also raises its alert job), anything
else fails at once; the baseline job records a not-conformant Production (1) as a baseline; the
compare step fails its job exactly when compare exits non-zero.  The job summary the GitHub recipe
relies on is checked end to end: the suite appends summary.md to $GITHUB_STEP_SUMMARY.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from devtools import run_suite
from devtools.launcher import ROOT

GITHUB = ROOT / "docs" / "ci" / "github-actions.yml"
GITLAB = ROOT / "docs" / "ci" / "gitlab-ci.yml"
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
VALUE_OPTIONS = {
    "-m",
    "-k",
    "-n",
    "-p",
    "-o",
    "--contract-target",
    "--contract-profile",
    "--contract-seed",
    "--base-url",
    "--contract-request-timeout",
    "--contract-run-budget",
    "--contract-max-body-bytes",
    "--contract-circuit-breaker",
    "--contract-ca-bundle",
    "--contract-report-dir",
    "--junitxml",
    "--junit-xml",
    "--html",
    "--deselect",
    "--port",
    "--variant",
    "--fault",
}


def command(
    args: list[str], *, env: dict[str, str] | None = None, cwd: Path = ROOT
) -> subprocess.CompletedProcess[str]:
    """A raw command line (pytest's help, the reference server's, a recipe's shell), bounded in time."""
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False)


def pytest_help(*args: str) -> str:
    done = command([sys.executable, "-m", "pytest", *args, "-p", "no:cacheprovider"])
    assert done.returncode == 0, done.stderr
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


def github_scripts(workflow: dict[Any, Any]) -> Iterator[tuple[str, str]]:
    for job_name, job in workflow["jobs"].items():
        for step in job.get("steps", []):
            if "run" in step:
                yield job_name, str(step["run"])


def gitlab_scripts(pipeline: dict[str, Any]) -> Iterator[tuple[str, str]]:
    for job_name, job in pipeline.items():
        if isinstance(job, dict):
            for key in ("before_script", "script"):
                for entry in job.get(key, []):
                    yield job_name, str(entry)


def github_commands(workflow: dict[Any, Any]) -> Iterator[tuple[str, str]]:
    for job_name, script in github_scripts(workflow):
        for line in script.splitlines():
            yield job_name, line


def gitlab_commands(pipeline: dict[str, Any]) -> Iterator[tuple[str, str]]:
    for job_name, script in gitlab_scripts(pipeline):
        for line in script.splitlines():
            yield job_name, line


def pytest_invocations(line: str) -> Iterator[list[str]]:
    """The arguments after ``pytest`` in each command of a shell line (``&&``, ``;``, ``|`` split).

    Only lines that run pytest are split (an ``echo "a; b"`` elsewhere would not split cleanly)."""
    if "pytest" not in line:
        return
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
        if name == "--contract-target" and value:
            pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
            assert value in pyproject["tool"]["petstore_contract"]["targets"], f"{where}: no target {value!r}"


def test_recipes_run_only_existing_options(
    github: dict[Any, Any], gitlab: dict[str, Any], help_text: str, markers: set[str]
) -> None:
    for name, commands in (("github", github_commands(github)), ("gitlab", gitlab_commands(gitlab))):
        runs: dict[str, int] = {}
        for job, line in commands:
            for args in pytest_invocations(line):
                assert_known(args, help_text, markers, f"{name} {job}: {line}")
                runs[job] = runs.get(job, 0) + 1
        assert runs == dict.fromkeys(SUITE_JOBS, 1), f"{name}: one suite command per suite job"


def test_every_suite_run_writes_the_reports_the_recipes_publish(github: dict[Any, Any], gitlab: dict[str, Any]) -> None:
    """--contract-report-dir=DIR (the job's artifact) and --junit-xml=DIR/junit.xml (GitLab's test report)."""
    runs = []
    for name, commands in (("github", github_commands(github)), ("gitlab", gitlab_commands(gitlab))):
        runs += [(name, job, dict(options_of(args))) for job, line in commands for args in pytest_invocations(line)]
    assert len(runs) == 2 * len(SUITE_JOBS)
    for name, job, options in runs:
        folder = options.get("--contract-report-dir")
        assert folder and options.get("--junit-xml") == f"{folder}/junit.xml", (name, job, options)
        kept = _github_artifact(github, job) if name == "github" else _gitlab_artifacts(gitlab, job)
        assert f"{folder}/" in kept, (name, job, folder, kept)


def _github_artifact(workflow: dict[Any, Any], job: str) -> list[str]:
    steps = workflow["jobs"][job]["steps"]
    return [str(s["with"]["path"]) for s in steps if str(s.get("uses", "")).startswith("actions/upload-artifact")]


def _gitlab_artifacts(pipeline: dict[str, Any], job: str) -> list[str]:
    artifacts = pipeline[job].get("artifacts") or pipeline[pipeline[job]["extends"]]["artifacts"]
    return [*artifacts["paths"], artifacts["reports"]["junit"].rsplit("/", 1)[0] + "/"]


def shown_commands(path: Path) -> list[str]:
    """The shell lines of a Markdown file's code blocks, and its code spans that run pytest."""
    text = path.read_text(encoding="utf-8")
    blocks = re.findall(r"```(?:sh|bash|console)\n(.*?)```", text, re.DOTALL)
    spans = [span for span in re.findall(r"`([^`\n]+)`", text) if "pytest" in span]
    return [line for block in blocks for line in block.splitlines()] + spans


def test_readme_commands_use_existing_options(help_text: str, markers: set[str]) -> None:
    for path in (README, *DOCS):
        checked = 0
        for line in shown_commands(path):
            for args in pytest_invocations(line):
                assert_known(args, help_text, markers, f"{path.relative_to(ROOT)}: {line}")
                checked += 1
        if path == README:
            assert checked >= 8, "the README should show how to run the suite"


@pytest.mark.parametrize(("module", "least"), [("petstore_contract.reference", 4), ("devtools.catalog", 3)])
def test_readme_reference_server_commands_exist(module: str, least: int) -> None:
    """The reference's command line (installed) and the catalog's (the checkout's), as the docs show them."""
    done = command([sys.executable, "-m", module, "--help"])
    assert done.returncode == 0, done.stderr
    cli = done.stdout
    shown = 0
    for path in (README, *DOCS):
        text = path.read_text(encoding="utf-8")
        for line in re.findall(rf"-m {re.escape(module)}([^\n#`]*)", text):
            shown += 1
            for word in shlex.split(line):
                if word.startswith("--"):
                    assert word.split("=")[0] in cli, f"{path.name}: {module} has no {word}"
    assert shown >= least, f"docs/reference-server.md should show how to start {module}"


def test_github_gate_keeps_reports_and_promotes_only_when_conformant(github: dict[Any, Any]) -> None:
    jobs = github["jobs"]
    gate = jobs["staging-gate"]
    upload = [s for s in gate["steps"] if str(s.get("uses", "")).startswith("actions/upload-artifact")]
    assert upload and upload[0]["if"] == "always()" and upload[0]["with"]["path"].rstrip("/") == "reports"
    assert jobs["promote"]["needs"] == ["staging-gate", "compare"] and "if" not in jobs["promote"], "after exit 0"
    assert jobs["compare"]["needs"] == ["staging-gate", "production-baseline"] and "if" not in jobs["compare"]
    assert jobs["production-smoke"]["needs"] == "promote"
    baseline = next(s for s in jobs["production-baseline"]["steps"] if "pytest" in str(s.get("run", "")))
    assert baseline["env"]["PETSTORE_PRODUCTION_API_KEY"] == "${{ secrets.PETSTORE_PRODUCTION_API_KEY }}"
    assert_read_only_production(baseline["run"])
    downloads = {
        s["with"]["name"]: s["with"]["path"] for s in jobs["compare"]["steps"] if "download" in s.get("uses", "")
    }
    assert downloads == {"production-baseline-reports": "production", "staging-contract-reports": "staging"}
    step = next(s for s in gate["steps"] if "pytest" in str(s.get("run", "")))
    assert step["env"]["PETSTORE_STAGING_API_KEY"] == "${{ secrets.PETSTORE_STAGING_API_KEY }}"
    assert "--contract-target staging" in step["run"]
    smoke = next(s for s in jobs["production-smoke"]["steps"] if "pytest" in str(s.get("run", "")))
    assert smoke["env"]["PETSTORE_PRODUCTION_API_KEY"] == "${{ secrets.PETSTORE_PRODUCTION_API_KEY }}"
    assert_read_only_production(smoke["run"])


def test_github_alerts_when_the_gate_stays_inconclusive(github: dict[Any, Any]) -> None:
    jobs = github["jobs"]
    gate = jobs["staging-gate"]
    step_id = next(s["id"] for s in gate["steps"] if "pytest" in str(s.get("run", "")))
    assert gate["outputs"]["exit-code"] == f"${{{{ steps.{step_id}.outputs.exit-code }}}}"
    alert = jobs["alert-inconclusive"]
    assert alert["needs"] == "staging-gate"
    # always(): the gate failed (exit 6), and a job that needs a failed job is skipped without it.
    assert alert["if"] == "always() && needs.staging-gate.outputs.exit-code == '6'"


def test_github_keeps_the_job_summary_variable(github: dict[Any, Any]) -> None:
    """The suite appends summary.md to $GITHUB_STEP_SUMMARY, which GitHub sets: no step may unset it."""
    for job in github["jobs"].values():
        for step in job.get("steps", []):
            assert "GITHUB_STEP_SUMMARY" not in step.get("env", {})
            assert "GITHUB_STEP_SUMMARY" not in str(step.get("run", ""))


def test_gitlab_gate_keeps_reports_and_promotes_only_when_conformant(gitlab: dict[str, Any]) -> None:
    template = gitlab[".contract-suite"]
    assert template["artifacts"]["when"] == "always" and "reports/" in template["artifacts"]["paths"]
    assert template["artifacts"]["reports"]["junit"] == "reports/junit.xml"
    assert gitlab["stages"] == ["gate", "compare", "promote", "smoke"]
    assert gitlab["staging-gate"]["extends"] == gitlab["production-smoke"]["extends"] == ".contract-suite"
    assert gitlab["promote"]["needs"] == ["staging-gate", "compare"] and gitlab["production-smoke"]["needs"] == [
        "promote"
    ]
    assert (
        gitlab["compare"]["needs"] == ["staging-gate", "production-baseline"]
        and "allow_failure" not in gitlab["compare"]
    )
    assert gitlab["production-baseline"]["stage"] == "gate"
    assert_read_only_production(gitlab["production-baseline"]["script"][0])
    assert "when" not in gitlab["promote"] and "allow_failure" not in gitlab["staging-gate"]
    assert "--contract-target staging" in gitlab["staging-gate"]["script"][0]
    assert_read_only_production(gitlab["production-smoke"]["script"][0])
    assert "API_KEY" not in GITLAB.read_text(encoding="utf-8").split("stages:")[1], "keys come from CI/CD variables"


# -- the recipes' shell, with a stand-in python that exits with chosen codes -------------------------

STUB_PYTHON = """#!/bin/sh
echo "$*" >> "$STUB_LOG"
code=$(head -n 1 "$STUB_CODES")
sed -i 1d "$STUB_CODES"
exit "$code"
"""
# exit codes of the suite runs in turn -> the job's exit code, suite runs made
SCENARIOS = {
    "conformant": ([0], 0, 1),
    "not conformant": ([1], 1, 1),
    "inconclusive, then conformant": ([6, 0], 0, 2),
    "inconclusive twice": ([6, 6], 6, 2),
    "inconclusive, then not conformant": ([6, 1], 1, 2),
    "usage error": ([4], 4, 1),
}
SUITE_JOBS = ("staging-gate", "production-baseline", "production-smoke")
# The baseline job records Production as it is: a not-conformant Production is still a baseline.
BASELINE_EXITS = {"not conformant": 0, "inconclusive, then not conformant": 0}


def suite_scripts() -> Iterator[tuple[str, str]]:
    github = yaml.safe_load(GITHUB.read_text(encoding="utf-8"))
    gitlab = yaml.safe_load(GITLAB.read_text(encoding="utf-8"))
    for name, scripts in (("github", github_scripts(github)), ("gitlab", gitlab_scripts(gitlab))):
        for job, script in scripts:
            if "pytest" in script:
                yield f"{name}:{job}", script


@pytest.mark.skipif(shutil.which("bash") is None, reason="the recipes' shell is bash")
@pytest.mark.parametrize("scenario", SCENARIOS)
@pytest.mark.parametrize(("job", "script"), list(suite_scripts()), ids=[job for job, _ in suite_scripts()])
def test_recipe_shell_maps_exit_codes(job: str, script: str, scenario: str, tmp_path: Path) -> None:
    codes, expected_exit, expected_runs = SCENARIOS[scenario]
    if job.endswith(":production-baseline"):
        expected_exit = BASELINE_EXITS.get(scenario, expected_exit)
    stubs = tmp_path / "bin"
    stubs.mkdir()
    (stubs / "python").write_text(STUB_PYTHON, encoding="utf-8")
    (stubs / "sleep").write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    for stub in stubs.iterdir():
        stub.chmod(0o755)
    (tmp_path / "codes").write_text("".join(f"{code}\n" for code in codes), encoding="utf-8")
    (tmp_path / "script.sh").write_text(script, encoding="utf-8")
    env = {
        "PATH": f"{stubs}:/usr/bin:/bin",
        "STUB_LOG": str(tmp_path / "runs"),
        "STUB_CODES": str(tmp_path / "codes"),
        "GITHUB_OUTPUT": str(tmp_path / "github-output"),
    }
    # GitHub runs `bash -e`, GitLab's runner `set -eo pipefail`: the stricter of the two.
    done = command(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(tmp_path / "script.sh")], env=env)
    runs = (tmp_path / "runs").read_text(encoding="utf-8").splitlines()
    assert (done.returncode, len(runs)) == (expected_exit, expected_runs), done.stdout + done.stderr
    assert all(run.startswith("-m pytest --contract-target ") for run in runs) and len(set(runs)) == 1, runs
    if job == "github:staging-gate":
        output = (tmp_path / "github-output").read_text(encoding="utf-8")
        assert output.splitlines() == [f"exit-code={expected_exit}"]
    if expected_exit == 6:
        assert "Inconclusive twice" in done.stdout


def test_the_suite_appends_its_summary_to_the_github_job_summary(tmp_path: Path) -> None:
    step_summary = tmp_path / "step-summary.md"
    step_summary.write_text("an earlier step's summary\n", encoding="utf-8")
    run = run_suite(
        None,
        None,
        "--contract-profile",
        "quick",
        "-k",
        "orders",
        env={"GITHUB_STEP_SUMMARY": str(step_summary)},
        keep=("summary.md", "junit.xml"),
        timeout=300,
    )
    assert run.verdict == "conformant" and run.exit_code == 0, run.output[-3000:]
    assert step_summary.read_text(encoding="utf-8") == f"an earlier step's summary\n{run.reports['summary.md']}\n"
    assert "<testsuite" in run.reports["junit.xml"]


def assert_read_only_production(command: str) -> None:
    assert "--contract-target production" in command and "--contract-read-only" in command
    assert "--contract-allow-writes" not in command


def test_recipes_never_hold_a_key() -> None:
    for path in (GITHUB, GITLAB):
        for line in path.read_text(encoding="utf-8").splitlines():
            if "API_KEY" in line and ":" in line and not line.lstrip().startswith("#"):
                assert "${{ secrets." in line, f"{path.name}: {line.strip()}"


# -- the promotion: compare the Production baseline with Staging -----------------------------------------


def compare_commands() -> Iterator[tuple[str, list[str]]]:
    github = yaml.safe_load(GITHUB.read_text(encoding="utf-8"))
    gitlab = yaml.safe_load(GITLAB.read_text(encoding="utf-8"))
    for name, commands in (("github", github_commands(github)), ("gitlab", gitlab_commands(gitlab))):
        for job, line in commands:
            if "petstore-contract compare" in line:
                yield f"{name}:{job}", shlex.split(line)


def test_the_compare_step_compares_the_production_baseline_with_staging() -> None:
    done = command([sys.executable, "-m", "petstore_contract.cli", "compare", "--help"])
    assert done.returncode == 0, done.stderr
    found = list(compare_commands())
    assert [job for job, _ in found] == ["github:compare", "gitlab:compare"]
    for job, words in found:
        assert words[:2] == ["petstore-contract", "compare"] and "||" not in words, job
        base, new = words[2:4]
        assert "production" in base and base.endswith("summary.json") and new.endswith("summary.json"), job
        assert "production" not in new, job
        for name, _ in options_of(words[4:]):
            assert name in done.stdout, f"{job}: compare has no option {name}"


STUB_COMPARE = """#!/bin/sh
exit "$STUB_CODE"
"""


@pytest.mark.skipif(shutil.which("bash") is None, reason="the recipes' shell is bash")
@pytest.mark.parametrize("code", [0, 1, 2])
def test_the_compare_step_fails_its_job_exactly_on_a_regression_or_an_error(code: int, tmp_path: Path) -> None:
    stubs = tmp_path / "bin"
    stubs.mkdir()
    (stubs / "petstore-contract").write_text(STUB_COMPARE, encoding="utf-8")
    (stubs / "petstore-contract").chmod(0o755)
    for job, words in compare_commands():
        script = tmp_path / "compare.sh"
        script.write_text(shlex.join(words) + "\n", encoding="utf-8")
        env = {"PATH": f"{stubs}:/usr/bin:/bin", "STUB_CODE": str(code)}
        done = command(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], env=env)
        assert done.returncode == code, job
