"""A wheel built from the repository installs into a fresh virtual environment and, from an empty
directory, runs the suite against a server started with ``python -m petstore_contract.reference``.

The fresh environment gets the wheel itself; its dependencies are borrowed from this environment's
site-packages (a path line, which does not activate this checkout's editable install), so the test
needs no network.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import site
import subprocess
import sys
import venv
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
KEY = "wheel-test-key-0123456789"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    build = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(build), str(ROOT)],
        check=True,
        timeout=300,
    )
    return next(build.glob("petstore_contract-*.whl"))


@pytest.fixture(scope="module")
def wheel_env(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    env_dir = tmp_path_factory.mktemp("venv") / "env"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    purelib = subprocess.check_output(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], text=True
    ).strip()
    (Path(purelib) / "borrowed-deps.pth").write_text("\n".join(site.getsitepackages()) + "\n", encoding="utf-8")
    subprocess.run(
        # No bytecode: every run compiles the package anew, as an environment that caches none does
        # (the import race of issue 22 showed there).
        [
            *(sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--no-compile"),
            *("--target", purelib, str(wheel)),
        ],
        check=True,
        timeout=300,
    )
    return python


def _clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PETSTORE_", "PYTHONPATH"))}
    return {**env, "PETSTORE_API_KEY": KEY, "PYTHONDONTWRITEBYTECODE": "1"}


@contextlib.contextmanager
def _reference(python: Path, cwd: Path) -> Iterator[str]:
    """``python -m petstore_contract.reference`` from the installed wheel; its base URL."""
    server = subprocess.Popen(
        [str(python), "-m", "petstore_contract.reference", "--port", "0"],
        cwd=cwd,
        env=_clean_env(),
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        lines = [server.stdout.readline() for _ in range(2)]
        base_url = lines[-1].removeprefix("base URL:").strip()
        assert base_url.startswith("http://127.0.0.1:"), base_url
        yield base_url
    finally:
        server.terminate()
        server.wait(timeout=10)


def _installed_run(python: Path, cwd: Path, base_url: str, reports: Path) -> subprocess.CompletedProcess[str]:
    command = [
        str(python),
        "-m",
        "petstore_contract.cli",
        "--base-url",
        base_url,
        "--contract-report-dir",
        str(reports),
    ]
    return subprocess.run(
        [*command, "--contract-profile", "quick"],
        cwd=cwd,
        env=_clean_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_installed_wheel_runs_the_suite_from_an_empty_directory(wheel_env: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty dir"
    empty.mkdir()
    reports = empty / "my reports"
    with _reference(wheel_env, empty) as base_url:
        done = _installed_run(wheel_env, empty, base_url, reports)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
        summary = json.loads((reports / "summary.json").read_text(encoding="utf-8"))
        # The report's "Run it again" line, pasted into a shell in the same directory, runs the wheel's
        # suite with the same seed (one test of it here: the line runs, and asks what the run asked).
        again = subprocess.run(
            ["sh", "-c", f"{summary['replay']} -k test_orders --contract-report-dir=again"],
            cwd=empty,
            env=_clean_env(),
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert again.returncode == 0, summary["replay"] + "\n" + again.stdout[-3000:] + again.stderr[-2000:]
    assert summary["verdict"] == "conformant"
    assert summary["tests"]["tests"] > 200
    assert f"--base-url {base_url} --contract-profile quick --contract-seed 20301205" in summary["replay"]
    assert json.loads((empty / "again" / "summary.json").read_text(encoding="utf-8"))["replay"] == summary["replay"]
    # A guest that leaves nothing: no warning of its own, only the reports in the user's directory (no
    # .hypothesis/: Hypothesis' caches go to the run's own temporary directory).
    assert "warnings summary" not in done.stdout and "Warning" not in done.stdout + done.stderr, done.stdout[-3000:]
    assert sorted(p.name for p in empty.iterdir()) == ["again", "my reports"]
    location = subprocess.check_output(
        [str(wheel_env), "-c", "import petstore_contract; print(petstore_contract.__file__)"], text=True
    )
    assert str(ROOT) not in location, f"the checkout was imported, not the wheel: {location}"


# 20 runs (tier 2), so that a gate failing one run in six shows with 97 % certainty (1 - (5/6)^20); tier 1
# runs the wheel once (test_installed_wheel_runs_the_suite_from_an_empty_directory).
RUNS = 20


@pytest.mark.tier_2
def test_installed_wheel_is_conformant_every_time(wheel_env: Path, tmp_path: Path) -> None:
    """A gate that says "inconclusive" one run in six on a healthy Staging gets switched off: runs in a
    row of the installed wheel (no bytecode caches) against a conformant server all end conformant."""
    verdicts = []
    with _reference(wheel_env, tmp_path) as base_url:
        for number in range(RUNS):
            done = _installed_run(wheel_env, tmp_path, base_url, tmp_path / f"run-{number}")
            verdicts.append(done.returncode)
            assert done.returncode == 0, f"run {number + 1}: exit {done.returncode}\n" + done.stdout[-3000:]
    assert verdicts == [0] * RUNS


@pytest.mark.tier_2
def test_installed_wheel_certifies_and_verifies_from_an_empty_directory(wheel_env: Path, tmp_path: Path) -> None:
    """``petstore-contract certify`` runs the wheel's own suite (not a checkout's tests/), and the bundle
    verifies with the installed ``petstore-contract verify``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PETSTORE_", "PYTHONPATH", "GITHUB_STEP"))}
    out = tmp_path / "bundle"

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        command = [str(wheel_env), "-m", "petstore_contract.cli", *args]
        return subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)

    done = cli("certify", "--product", "Wheel", "--product-version", "1", "--out", str(out), "-q")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "warnings summary" not in done.stdout and not (tmp_path / ".hypothesis").exists(), done.stdout[-3000:]
    verified = cli("verify", str(out))
    assert verified.returncode == 0 and verified.stdout.startswith("verified: conformant"), verified.stdout


def test_installed_wheel_names_its_judge_and_has_help_for_every_subcommand(wheel_env: Path, tmp_path: Path) -> None:
    """``--version`` names the judge's releases (a seed replays the same requests only with them)."""
    version = subprocess.run(
        [str(wheel_env), "-m", "petstore_contract.cli", "--version"], cwd=tmp_path, capture_output=True, text=True
    )
    assert version.returncode == 0 and re.fullmatch(
        r"petstore-contract \S+ \(Schemathesis \S+, Hypothesis \S+, pytest \S+\)\n", version.stdout
    ), version.stdout + version.stderr
    for command in ("compare", "certify", "verify", "replay"):
        done = subprocess.run(
            [str(wheel_env), "-m", "petstore_contract.cli", command, "--help"], cwd=tmp_path, capture_output=True
        )
        assert done.returncode == 0, (command, done.stderr)

    # From a directory without targets, --help and --contract-target say how to declare one; a project's
    # own targets are listed.
    def cli(*args: str, cwd: Path = tmp_path) -> subprocess.CompletedProcess[str]:
        command = [str(wheel_env), "-m", "petstore_contract.cli", *args]
        return subprocess.run(command, cwd=cwd, env=_clean_env(), capture_output=True, text=True, timeout=120)

    suite_help = cli("--help").stdout.partition("pytest's own options follow")[0]
    assert f"named targets (--contract-target NAME): none in {tmp_path / 'pyproject.toml'}; declare one" in suite_help
    assert "[tool.petstore_contract.targets.staging]" in suite_help and "PETSTORE_API_KEY" in suite_help
    unknown = cli("--contract-target", "staging")
    assert unknown.returncode == 4 and unknown.stderr.startswith(
        f"ERROR: unknown --contract-target 'staging'; configured targets: none in {tmp_path / 'pyproject.toml'}; "
    ), unknown.stderr
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        '[tool.petstore_contract.targets.qa]\nbase-url = "https://qa.example/v1"\nkey-env = "QA_KEY"\n'
        "read-only = true\n",
        encoding="utf-8",
    )
    assert "  qa: https://qa.example/v1 (key in QA_KEY, read-only)" in cli("--help", cwd=project).stdout


COSMIC_RAY_IMPORT = re.compile(r"^\s*(import|from)\s+cosmic_ray\b", re.MULTILINE)
# A module that defines one of the catalog's tables (``VARIANTS: dict[...] = ...``, ``FAULTS, RFC_QUOTES = ...``).
CATALOG_TABLE = re.compile(r"^(FAULTS|RFC_QUOTES|REGISTERED|VARIANTS|UNJUDGEABLE)\b[^=\n]*=", re.MULTILINE)


def contents(wheel: Path) -> dict[str, str]:
    """Every file of the wheel by name, as text."""
    with zipfile.ZipFile(wheel) as archive:
        return {name: archive.read(name).decode("utf-8", "replace") for name in archive.namelist()}


def offending(files: dict[str, str], name: str, source: re.Pattern[str]) -> list[str]:
    """The files whose name matches ``name``, and the modules whose source matches ``source``."""
    return [n for n, text in files.items() if re.search(name, n) or (n.endswith(".py") and source.search(text))]


def test_wheel_holds_no_mutation_testing(wheel: Path) -> None:
    """Mutation testing is a development tool of the checkout (devtools/), never installed: no module of
    it, no cosmic-ray import, no classification file; cosmic-ray is a requirement of the dev extra only."""
    files = contents(wheel)
    tools = offending(files, r"(^|/)(selfcheck|devtools|mutation)(/|$)|mutants\.toml$", COSMIC_RAY_IMPORT)
    assert tools == [], tools
    metadata = next(text for name, text in files.items() if name.endswith(".dist-info/METADATA"))
    requirements = [line for line in metadata.splitlines() if line.startswith("Requires-Dist: cosmic-ray")]
    assert requirements and all("extra == 'dev'" in line or 'extra == "dev"' in line for line in requirements)
    assert any(n.startswith("petstore_contract/reference/") for n in files)  # the listing is the package's


def test_wheel_holds_no_fault_catalog(wheel: Path) -> None:
    """The fault catalog and the compliant variants are the self-proof's material (devtools/catalog), never
    installed: no faulty/ implementations, no faults.toml nor its loader, no fault registry, no module
    defining the catalog's tables; the clean reference and its knobs (``Variant``, ``REFERENCE``) stay."""
    files = contents(wheel)
    catalog = offending(files, r"(^|/)(faulty|catalog)/|(^|/)(faults\.(toml|py)|registry\.py)$", CATALOG_TABLE)
    assert catalog == [], catalog
    knobs = files["petstore_contract/reference/variants.py"]
    assert "class Variant" in knobs and re.search(r"^REFERENCE = Variant\(", knobs, re.MULTILINE)
    for module in ("app", "rules", "asgi", "server", "child", "sockets", "__main__"):
        assert f"petstore_contract/reference/{module}.py" in files
