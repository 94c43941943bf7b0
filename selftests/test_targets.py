"""Named targets (staging, production): resolution, read-only defaults, keys, usage errors.

Unit tests call ``target.resolve`` with a monkeypatched environment and a temporary
pyproject.toml; the usage errors are also checked end to end (exit code 4, one line on stderr,
no report), and the run's header through the launcher.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from devtools import run_suite
from devtools.launcher import ROOT
from petstore_contract.interface.spec import suite_dir
from petstore_contract.reference import BackgroundServer, build_app
from petstore_contract.run import Run, RunSettings
from petstore_contract.run.target import Target, TargetConfigError, load_named_targets, resolve

STAGING_KEY = "staging-key-0b6f2d71"
PRODUCTION_KEY = "production-key-91ac4e03"
PYPROJECT = """
[tool.petstore_contract.targets.staging]
base-url = "https://staging.petstore.example/v1"
key-env = "PETSTORE_STAGING_API_KEY"

[tool.petstore_contract.targets.production]
base-url = "https://petstore.example/v1"
key-env = "PETSTORE_PRODUCTION_API_KEY"
read-only = true
"""


@pytest.fixture
def pyproject(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in list(os.environ):
        if name.startswith("PETSTORE_"):
            monkeypatch.delenv(name)
    path = tmp_path / "pyproject.toml"
    path.write_text(PYPROJECT, encoding="utf-8")
    return path


def resolve_with(pyproject: Path, target: str | None = None, **options: object) -> Target | None:
    args: dict[str, object] = {"base_url": None, "read_only": False, "allow_writes": False, **options}
    return resolve(target_name=target, pyproject=pyproject, **args)  # type: ignore[arg-type]


def test_project_declares_staging_and_production(pyproject: Path) -> None:
    named = load_named_targets(ROOT / "pyproject.toml")
    assert named["staging"].base_url == "https://staging.petstore.example/v1"
    assert named["production"].base_url == "https://petstore.example/v1"
    assert named["staging"].key_env == "PETSTORE_STAGING_API_KEY" and not named["staging"].read_only
    assert named["production"].key_env == "PETSTORE_PRODUCTION_API_KEY" and named["production"].read_only


def test_staging_reads_its_own_key_and_may_write(pyproject: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PETSTORE_STAGING_API_KEY", STAGING_KEY)
    target = resolve_with(pyproject, "staging")
    assert target == Target(
        "staging", "https://staging.petstore.example/v1", STAGING_KEY, False, "PETSTORE_STAGING_API_KEY"
    )
    assert target.mode == "read-write"


def test_production_is_read_only_by_default(pyproject: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PETSTORE_PRODUCTION_API_KEY", PRODUCTION_KEY)
    target = resolve_with(pyproject, "production")
    assert target is not None and target.read_only and target.mode == "read-only"
    assert target.api_key == PRODUCTION_KEY


def test_allow_writes_overrides_the_read_only_default(pyproject: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PETSTORE_PRODUCTION_API_KEY", PRODUCTION_KEY)
    target = resolve_with(pyproject, "production", allow_writes=True)
    assert target is not None and not target.read_only


def test_read_only_applies_to_a_writable_target(pyproject: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PETSTORE_STAGING_API_KEY", STAGING_KEY)
    target = resolve_with(pyproject, "staging", read_only=True)
    assert target is not None and target.read_only


def test_environment_overrides_the_url(pyproject: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PETSTORE_STAGING_API_KEY", STAGING_KEY)
    monkeypatch.setenv("PETSTORE_STAGING_BASE_URL", "http://127.0.0.1:8080/v1/")
    target = resolve_with(pyproject, "staging")
    assert target is not None and target.base_url == "http://127.0.0.1:8080/v1"


def test_a_url_override_keeps_production_read_only_and_its_key(
    pyproject: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PETSTORE_PRODUCTION_API_KEY", PRODUCTION_KEY)
    monkeypatch.setenv("PETSTORE_API_KEY", "some-other-key-6d1f")
    target = resolve_with(pyproject, "production", base_url="http://127.0.0.1:9999/v1")
    assert target is not None and target.read_only
    assert target.api_key == PRODUCTION_KEY and target.key_env == "PETSTORE_PRODUCTION_API_KEY"


def test_missing_key_names_the_variable(pyproject: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PETSTORE_API_KEY", "generic-key-never-sent-to-staging")
    with pytest.raises(TargetConfigError, match=r"^PETSTORE_STAGING_API_KEY is not set: the staging target") as err:
        resolve_with(pyproject, "staging")
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("blank", ["", "   "])
def test_an_empty_key_is_called_empty(pyproject: Path, monkeypatch: pytest.MonkeyPatch, blank: str) -> None:
    """A variable that is set, to nothing (a CI secret that did not reach the job), is said to be empty:
    "not set" would send the user looking for a missing line."""
    monkeypatch.setenv("PETSTORE_PRODUCTION_API_KEY", blank)
    with pytest.raises(TargetConfigError, match=r"^PETSTORE_PRODUCTION_API_KEY is empty: the production target"):
        resolve_with(pyproject, "production")


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("ftp://staging.example/v1", "is not an http(s) URL with a host"),
        ("https:///v1", "is not an http(s) URL with a host"),
        ("https://user:secret@staging.example/v1", "must not carry credentials"),
        ("https://staging.example/v1?x=1", "must not have a query or fragment"),
        ("https://staging.example:99999/v1", "has a malformed port"),
        # §1, §9.2: a base address ends in /v1; without it every path is a 404 (issue 39)
        (
            "http://127.0.0.1:8000",
            "does not end in /v1, as the document's base addresses do (§1, §9.2); did you "
            "mean --base-url http://127.0.0.1:8000/v1?",
        ),
        ("https://staging.example/api/", "did you mean --base-url https://staging.example/api/v1?"),
    ],
)
def test_malformed_url_is_one_line(pyproject: Path, monkeypatch: pytest.MonkeyPatch, url: str, message: str) -> None:
    monkeypatch.setenv("PETSTORE_STAGING_API_KEY", STAGING_KEY)
    monkeypatch.setenv("PETSTORE_STAGING_BASE_URL", url)
    with pytest.raises(TargetConfigError) as err:
        resolve_with(pyproject, "staging")
    assert message in str(err.value) and "\n" not in str(err.value)
    assert "secret" not in str(err.value)


def test_read_only_and_allow_writes_contradict(pyproject: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PETSTORE_STAGING_API_KEY", STAGING_KEY)
    with pytest.raises(
        TargetConfigError, match="--contract-read-only and --contract-allow-writes contradict each other"
    ):
        resolve_with(pyproject, "staging", read_only=True, allow_writes=True)


def test_unknown_target_lists_the_configured_ones(pyproject: Path) -> None:
    with pytest.raises(
        TargetConfigError, match="unknown --contract-target 'qa'; configured targets: production, staging"
    ):
        resolve_with(pyproject, "qa")


def test_unknown_target_names_the_one_probably_meant(pyproject: Path) -> None:
    with pytest.raises(
        TargetConfigError, match=r"configured targets: production, staging; did you mean --contract-target staging\?$"
    ):
        resolve_with(pyproject, "stagign")


def test_no_target_configured_says_how_to_define_one(tmp_path: Path) -> None:
    """From a directory without targets (an installed run), the line says where they go and how they read."""
    with pytest.raises(TargetConfigError) as err:
        resolve_with(tmp_path / "pyproject.toml", "staging")
    line = str(err.value)
    assert line.startswith(
        f"unknown --contract-target 'staging'; configured targets: none in {tmp_path / 'pyproject.toml'}"
    )
    assert '[tool.petstore_contract.targets.staging] base-url = "https://.../v1"' in line
    assert 'key-env = "PETSTORE_STAGING_API_KEY"' in line and "--base-url URL" in line and "\n" not in line


def test_no_target_means_the_embedded_reference(pyproject: Path) -> None:
    assert resolve_with(pyproject) is None


def test_the_key_is_never_in_a_repr_a_description_the_facts_or_the_worker_settings() -> None:
    target = Target("staging", "https://staging.petstore.example/v1", STAGING_KEY, False, "PETSTORE_STAGING_API_KEY")
    settings = RunSettings(
        target_name=target.name, base_url=target.base_url, key_env=target.key_env, read_only=target.read_only
    )
    run = Run(settings, STAGING_KEY)
    try:
        facts = run.facts()
        assert {k: facts[k] for k in ("target", "base_url", "mode", "key_env")} == {
            "target": "staging",
            "base_url": "https://staging.petstore.example/v1",
            "mode": "read-write",
            "key_env": "PETSTORE_STAGING_API_KEY",
        }
        shipped = json.dumps(settings.to_dict())  # what xdist workers get: they read the key from key_env
        for text in (repr(target), target.describe(), json.dumps(facts), shipped, repr(run.target)):
            assert STAGING_KEY not in text
        assert run.redact(f"Bearer {STAGING_KEY}") == "Bearer [REDACTED]"
        assert run.redact.for_exchange(f"Bearer {STAGING_KEY}") == "Bearer $PETSTORE_STAGING_API_KEY"
    finally:
        run.transport.close()


REPLAYED_MODE = [  # (target, read_only, the mode options of the replay line)
    ("production", False, ["--contract-allow-writes"]),  # a read-only target told to write replays writing
    ("production", True, ["--contract-read-only"]),
    ("custom", False, []),
    ("embedded", True, ["--contract-read-only"]),
]


@pytest.mark.parametrize(("name", "read_only", "mode"), REPLAYED_MODE)
def test_the_replay_line_keeps_the_runs_mode(name: str, read_only: bool, mode: list[str]) -> None:
    settings = RunSettings(name, "http://127.0.0.1:9/v1", "PETSTORE_API_KEY", read_only=read_only)
    run = Run(settings, STAGING_KEY)
    try:
        words = shlex.split(run.replay_command())
    finally:
        run.transport.close()
    assert [w for w in words if w in ("--contract-allow-writes", "--contract-read-only")] == mode


# -- end to end: usage errors exit 4 in one line; the header names target, URL and mode ------------


def run_pytest(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """The raw command line with no PETSTORE_ variable but ``env``'s (a usage error writes no report)."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("PETSTORE_") and k != "PYTEST_BASE_URL"}
    return subprocess.run(
        [sys.executable, "-m", "pytest", str(suite_dir()), "-p", "no:cacheprovider", *args],
        cwd=cwd,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (["--contract-target", "staging"], {}, "PETSTORE_STAGING_API_KEY is not set"),
        (["--contract-target", "production"], {"PETSTORE_API_KEY": "k-3e1"}, "PETSTORE_PRODUCTION_API_KEY is not set"),
        (["--base-url", "http://127.0.0.1:9/v1"], {}, "PETSTORE_API_KEY is not set: the target"),
        (["--base-url", "http://127.0.0.1:9/v1"], {"PETSTORE_API_KEY": ""}, "PETSTORE_API_KEY is empty: the target"),
        (
            ["--contract-target", "staging"],
            {"PETSTORE_STAGING_API_KEY": STAGING_KEY, "PETSTORE_STAGING_BASE_URL": "ftp://x/v1"},
            "is not an http(s) URL with a host",
        ),
        (
            ["--contract-target", "staging", "--contract-read-only", "--contract-allow-writes"],
            {"PETSTORE_STAGING_API_KEY": STAGING_KEY},
            "--contract-read-only and --contract-allow-writes contradict each other",
        ),
        (["--contract-target", "qa"], {}, "unknown --contract-target 'qa'"),
        (["--contract-run-budget", "0"], {}, "--contract-run-budget must be a positive number of seconds"),
        (["--contract-max-body-bytes", "0"], {}, "--contract-max-body-bytes must be at least 1"),
        (["--contract-concurrency", "0"], {}, "--contract-concurrency must be at least 1"),
        (["--contract-profile", "nightly"], {}, "--contract-profile must be one of quick, default, deep"),
        (
            ["--contract-client-key", str(ROOT / "pyproject.toml")],
            {},
            "--contract-client-key needs --contract-client-cert",
        ),
        (["--contract-ca-bundle", "no-such-bundle.pem"], {}, "--contract-ca-bundle: no such file: no-such-bundle.pem"),
    ],
)
def test_usage_errors_exit_4_in_one_line(args: list[str], env: dict[str, str], message: str, tmp_path: Path) -> None:
    done = run_pytest(*args, env=env, cwd=tmp_path)
    assert done.returncode == 4, done.stdout + done.stderr
    assert message in done.stderr and "Traceback" not in done.stdout + done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert STAGING_KEY not in done.stdout + done.stderr
    assert not (tmp_path / "reports").exists(), "a usage error claims no verdict: no report"


@pytest.fixture(scope="module")
def reference() -> Iterator[BackgroundServer]:
    with BackgroundServer(build_app(PRODUCTION_KEY)) as server:
        yield server


def test_header_names_target_url_and_mode_never_the_key(reference: BackgroundServer) -> None:
    env = {
        "PETSTORE_PRODUCTION_API_KEY": PRODUCTION_KEY,
        "PETSTORE_PRODUCTION_BASE_URL": reference.base_url,
        "PETSTORE_BASE_URL": "",  # would override the target's URL
    }
    # -v undoes the launcher's -q: pytest prints the header (and runs its pre-flight request) only then.
    run = run_suite(None, None, "--contract-target", "production", "--collect-only", "-v", env=env, timeout=120)
    assert run.exit_code == 0, run.output[-3000:]
    assert f"petstore target: production {reference.base_url} (read-only)" in run.output
    assert "petstore PROBLEM" not in run.output
    assert PRODUCTION_KEY not in run.output


def test_header_names_a_rejected_key_in_one_line(reference: BackgroundServer) -> None:
    env = {"PETSTORE_STAGING_API_KEY": STAGING_KEY, "PETSTORE_STAGING_BASE_URL": reference.base_url}
    run = run_suite(
        None, None, "--contract-target", "staging", "--collect-only", "-v", env={**env, "PETSTORE_BASE_URL": ""}
    )
    problem = "petstore PROBLEM: the configured key was rejected (401 to GET /pets): check PETSTORE_STAGING_API_KEY"
    assert problem in run.output.splitlines(), run.output[-3000:]
    assert STAGING_KEY not in run.output


def test_a_spec_that_does_not_load_is_a_collection_error_not_an_internal_error(tmp_path: Path) -> None:
    """The embedded run loads the schemas while its reference starts; a broken spec still surfaces
    where it did before, as the generated tests' collection error."""
    broken = tmp_path / "openapi.yaml"
    broken.write_text("openapi: [broken\n", encoding="utf-8")
    done = run_pytest(f"--contract-report-dir={tmp_path / 'reports'}", env={"PETSTORE_SPEC": str(broken)}, cwd=tmp_path)
    assert done.returncode != 0
    assert "INTERNALERROR" not in done.stdout + done.stderr
    assert "ERROR collecting" in done.stdout and "test_generated.py" in done.stdout
