"""The recipes for a vendor whose service is not written in Python (``docs/ci/vendor-github-actions.yml``,
``docs/ci/vendor-gitlab-ci.yml``, the README's first screen): the gate's commands run as written.

Tier 1 runs each recipe's gate script in bash against the reference server, with a stand-in ``pipx`` or
``uvx`` that checks the suite's spec it is given and runs this environment's ``petstore-contract`` with
the rest of its words: the recipe's options and reports as CI would see them; then with a suite that
exits with each code, the job's exit code and last line.  Tier 2 installs pipx and uv from PyPI into a
virtual environment of their own, builds the wheel with the README's command, and runs the same scripts
and the README's two lines with the real tools: each makes an environment of its own for the suite, from
the wheel or the checkout, as on the vendor's runner (PyPI reached, hence tier 2).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import venv
from pathlib import Path
from typing import Any

import pytest
import yaml

from gatekit import KEY, QUICK, free_port, served

ROOT = Path(__file__).resolve().parents[1]
GITHUB = ROOT / "docs" / "ci" / "vendor-github-actions.yml"
GITLAB = ROOT / "docs" / "ci" / "vendor-gitlab-ci.yml"
SCRIPT = Path(sys.executable).parent / "petstore-contract"
# A stand-in for pipx and uvx: the spec must be the recipe's variable, then this environment's suite runs.
STAND_IN = """#!/bin/sh
case "$1 $2" in
  "run --spec"|"--from $PETSTORE_CONTRACT_SPEC") ;;
  *) echo "stand-in: unexpected $*" >&2; exit 97 ;;
esac
if [ "$1" = run ]; then spec=$3; shift 3; else spec=$2; shift 2; fi
[ "$spec" = "$PETSTORE_CONTRACT_SPEC" ] || { echo "stand-in: spec $spec" >&2; exit 98; }
[ "$1" = petstore-contract ] || { echo "stand-in: command $1" >&2; exit 99; }
shift
exec "$PETSTORE_SUITE" "$@"
"""


def github_step(name: str) -> dict[str, Any]:
    workflow = yaml.safe_load(GITHUB.read_text(encoding="utf-8"))
    step: dict[str, Any] = next(s for s in workflow["jobs"]["contract"]["steps"] if s.get("name") == name)
    return step


def gate_scripts() -> dict[str, str]:
    """The gate's shell script of each recipe."""
    pipeline = yaml.safe_load(GITLAB.read_text(encoding="utf-8"))
    return {"github": str(github_step("Contract gate")["run"]), "gitlab": "\n".join(pipeline["contract"]["script"])}


def recipe_env(recipe: str) -> dict[str, str]:
    """The variables the recipe sets for its gate (the key's secret aside)."""
    if recipe == "github":
        workflow = yaml.safe_load(GITHUB.read_text(encoding="utf-8"))
        given = workflow["jobs"]["contract"]["env"]
    else:
        given = yaml.safe_load(GITLAB.read_text(encoding="utf-8"))["contract"]["variables"]
    return {k: str(v) for k, v in given.items() if not str(v).startswith("${{")}


def run_gate(
    recipe: str, cwd: Path, base_url: str, path: str, spec: str, selection: str, **extra: str
) -> subprocess.CompletedProcess[str]:
    """The recipe's gate script in bash (GitHub's ``bash -e``, GitLab's ``set -eo pipefail``: the stricter)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PETSTORE_", "PYTEST_", "GITHUB_"))}
    env |= recipe_env(recipe) | {"PATH": path, "PETSTORE_BASE_URL": base_url, "PETSTORE_API_KEY": KEY}
    env |= {"PETSTORE_CONTRACT_SPEC": spec, "PETSTORE_SUITE": str(SCRIPT), "PYTEST_ADDOPTS": selection} | extra
    (cwd / "gate.sh").write_text(gate_scripts()[recipe], encoding="utf-8")
    command = ["bash", "--noprofile", "--norc", "-eo", "pipefail", "gate.sh"]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=900, check=False)


def assert_reports(folder: Path, verdict: str) -> None:
    summary = json.loads((folder / "reports" / "summary.json").read_text(encoding="utf-8"))
    assert summary["verdict"] == verdict
    assert "<testsuite" in (folder / "reports" / "junit.xml").read_text(encoding="utf-8")


def stand_ins(tmp_path: Path) -> str:
    stubs = tmp_path / "bin"
    stubs.mkdir()
    for name in ("pipx", "uvx"):
        (stubs / name).write_text(STAND_IN, encoding="utf-8")
        (stubs / name).chmod(0o755)
    return f"{stubs}:/usr/bin:/bin"


@pytest.mark.parametrize("recipe", ["github", "gitlab"])
def test_the_vendor_recipe_gates_a_service(recipe: str, tmp_path: Path) -> None:
    """Conformant: exit 0, the reports and JUnit where the recipe keeps them, the key in none of its output."""
    path = stand_ins(tmp_path)
    spec = recipe_env(recipe)["PETSTORE_CONTRACT_SPEC"]
    with served() as base_url:
        done = run_gate(recipe, tmp_path, base_url, path, spec, f"-k test_orders {' '.join(QUICK)}")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert done.stdout.rstrip().endswith("Conformant")
    assert_reports(tmp_path, "conformant")
    assert KEY not in done.stdout + done.stderr


# the suite's exit code -> the last line the job prints (the job's exit code is the suite's)
LAST_LINES = {
    0: "Conformant",
    1: "Not conformant: see reports/summary.md",
    6: "Inconclusive: the service could not be judged, see reports/summary.md",
    4: "The suite reached no verdict (exit 4): fix the job",
}


@pytest.mark.parametrize("code", LAST_LINES)
@pytest.mark.parametrize("recipe", ["github", "gitlab"])
def test_the_vendor_recipe_passes_on_the_suites_exit_code(recipe: str, code: int, tmp_path: Path) -> None:
    """The job fails exactly when the suite does not say conformant, with the suite's exit code and a
    line saying what it means (the suite replaced by one that exits with ``code``)."""
    path = stand_ins(tmp_path)
    suite = tmp_path / "suite"
    suite.write_text(f"#!/bin/sh\nexit {code}\n", encoding="utf-8")
    suite.chmod(0o755)
    spec = recipe_env(recipe)["PETSTORE_CONTRACT_SPEC"]
    done = run_gate(recipe, tmp_path, "http://127.0.0.1:9/v1", path, spec, "", PETSTORE_SUITE=str(suite))
    assert done.returncode == code, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == LAST_LINES[code]


def test_the_github_recipe_waits_for_the_service(tmp_path: Path) -> None:
    """Its wait step ends as soon as the service answers, and fails the job, in one line, when it never does."""
    script = str(github_step("Wait for the service")["run"])
    stubs = tmp_path / "bin"
    stubs.mkdir()
    (stubs / "sleep").write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    (stubs / "sleep").chmod(0o755)
    env = {"PATH": f"{stubs}:/usr/bin:/bin"}
    with served() as base_url:
        done = subprocess.run(
            ["bash", "-eo", "pipefail", "-c", script], env={**env, "PETSTORE_BASE_URL": base_url}, timeout=60
        )
    assert done.returncode == 0
    closed = f"http://127.0.0.1:{free_port()}/v1"
    done = subprocess.run(
        ["bash", "-eo", "pipefail", "-c", script],
        env={**env, "PETSTORE_BASE_URL": closed},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1 and done.stdout == f"the service did not answer on {closed} within 60 s\n"


def test_the_readme_shows_the_vendor_commands_on_its_first_screen() -> None:
    first_screen = "\n".join(
        (ROOT / "README.md").read_text(encoding="utf-8").splitlines()[:25]
    )  # as test_readme.py reads it
    for shown in (
        "pipx run --spec",
        "uvx --from",
        "pip wheel --no-deps -w dist .",
        "docs/ci/vendor-github-actions.yml",
    ):
        assert shown in first_screen, shown


# -- tier 2: the real pipx and uv, from PyPI ------------------------------------------------------------


@pytest.fixture(scope="module")
def tools(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """pipx and uv installed from PyPI into an environment of their own; its bin/."""
    home = tmp_path_factory.mktemp("tools") / "env"
    venv.EnvBuilder(with_pip=True).create(home)
    subprocess.run([str(home / "bin" / "python"), "-m", "pip", "install", "-q", "pipx", "uv"], check=True, timeout=600)
    return home / "bin"


@pytest.fixture(scope="module")
def built_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel, built with the README's command (pip's build isolation fetches the build backend)."""
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(ROOT)], check=True, timeout=600
    )
    return next(out.glob("petstore_contract-*.whl"))


@pytest.mark.tier_2
@pytest.mark.parametrize("recipe", ["github", "gitlab"])
def test_the_vendor_recipe_runs_with_the_real_tool(recipe: str, tools: Path, built_wheel: Path, tmp_path: Path) -> None:
    """``pipx run --spec WHEEL`` (GitHub) and ``uvx --from WHEEL`` (GitLab), as the recipes run them: each
    installs the suite from the wheel into an environment of its own and gates the reference."""
    # pipx's environments in the test's own directory; the package caches (pip's, uv's) are the user's
    homes = {"PIPX_HOME": str(tmp_path / "pipx"), "UV_TOOL_DIR": str(tmp_path / "uv-tools")}
    path = f"{tools}:/usr/bin:/bin"
    selection = f"-k test_orders {' '.join(QUICK)}"
    with served() as base_url:
        done = run_gate(recipe, tmp_path, base_url, path, str(built_wheel), selection, **homes)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert_reports(tmp_path, "conformant")


def readme_vendor_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    lines = [line for block in re.findall(r"```sh\n(.*?)```", text, re.DOTALL) for line in block.splitlines()]
    return [line for line in lines if re.search(r"\b(pipx run|uvx) ", line)]


@pytest.mark.tier_2
def test_the_readme_vendor_commands_run_as_shown(tools: Path, built_wheel: Path, tmp_path: Path) -> None:
    """The README's two lines, in a directory holding what they name: the wheel in dist/ (as the README's
    build command leaves it) and a checkout in ./petstore-contract."""
    commands = readme_vendor_commands()
    assert [bool(re.search(r"\bpipx run --spec ", c)) for c in commands] == [True, False], commands
    (tmp_path / "dist").mkdir()
    shutil.copy(built_wheel, tmp_path / "dist" / built_wheel.name)
    (tmp_path / "petstore-contract").symlink_to(ROOT, target_is_directory=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PETSTORE_", "PYTEST_", "GITHUB_"))}
    env |= {"PATH": f"{tools}:/usr/bin:/bin", "PETSTORE_API_KEY": KEY, "PIPX_HOME": str(tmp_path / "pipx")}
    env |= {"UV_TOOL_DIR": str(tmp_path / "uv-tools"), "PYTEST_ADDOPTS": f"-k test_orders {' '.join(QUICK)}"}
    with served() as base_url:
        for number, line in enumerate(commands):
            shown = line.replace("PETSTORE_API_KEY=... ", "").replace("http://127.0.0.1:8080/v1", base_url)
            reports = f"--contract-report-dir=reports-{number} "
            shown = shown.replace(" petstore-contract --base-url", f" petstore-contract {reports}--base-url")
            done = subprocess.run(
                ["bash", "-c", shown], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900
            )
            assert done.returncode == 0, line + "\n" + done.stdout[-3000:] + done.stderr[-3000:]
            summary = json.loads((tmp_path / f"reports-{number}" / "summary.json").read_text(encoding="utf-8"))
            assert summary["verdict"] == "conformant", line
