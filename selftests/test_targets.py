"""Named targets (staging, production): resolution, read-only defaults, keys, usage errors.

Unit tests call ``target.resolve`` with a monkeypatched environment and a temporary
pyproject.toml; the usage errors are also checked end to end (exit code 4, one line on stderr,
no report), and the run's header through the launcher.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
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


def test_one_rule_for_the_url_first_found_wins(pyproject: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--base-url > PETSTORE_<NAME>_BASE_URL > the target's base-url in pyproject.toml > PETSTORE_BASE_URL >
    the embedded reference; the named target's key and mode hold whichever URL wins."""
    monkeypatch.setenv("PETSTORE_PRODUCTION_API_KEY", PRODUCTION_KEY)
    monkeypatch.setenv("PETSTORE_API_KEY", "generic-key-5a0c")
    monkeypatch.setenv("PETSTORE_BASE_URL", "http://127.0.0.1:8082/v1")
    from_file = resolve_with(pyproject, "production")
    assert from_file is not None and from_file.base_url == "https://petstore.example/v1", "a named target beats it"
    assert from_file.read_only and from_file.api_key == PRODUCTION_KEY
    monkeypatch.setenv("PETSTORE_PRODUCTION_BASE_URL", "http://127.0.0.1:8081/v1")
    target = resolve_with(pyproject, "production")
    assert target is not None and target.base_url == "http://127.0.0.1:8081/v1", "the target's variable beats its file"
    assert target.read_only and target.key_env == "PETSTORE_PRODUCTION_API_KEY" and target.api_key == PRODUCTION_KEY
    explicit = resolve_with(pyproject, "production", base_url="http://127.0.0.1:8083/v1")
    assert explicit is not None and explicit.base_url == "http://127.0.0.1:8083/v1", "--base-url comes first"
    assert explicit.api_key == PRODUCTION_KEY
    unnamed = resolve_with(pyproject)
    assert unnamed is not None and unnamed.base_url == "http://127.0.0.1:8082/v1"
    assert unnamed.key_env == "PETSTORE_API_KEY" and unnamed.name == "custom"
    monkeypatch.delenv("PETSTORE_BASE_URL")
    assert resolve_with(pyproject) is None, "nothing named: the embedded reference"


@pytest.mark.parametrize(
    ("target", "env", "rule"),
    [
        ("production", {}, "https://petstore.example/v1 (from the production target's base-url in pyproject.toml)"),
        (
            "production",
            {"PETSTORE_PRODUCTION_BASE_URL": "http://127.0.0.1:8081/v1"},
            "http://127.0.0.1:8081/v1 (from PETSTORE_PRODUCTION_BASE_URL)",
        ),
        (None, {"PETSTORE_BASE_URL": "http://127.0.0.1:8082/v1"}, "http://127.0.0.1:8082/v1 (from PETSTORE_BASE_URL)"),
        (None, {}, "the embedded reference (no deployment named)"),
    ],
)
def test_pytest_base_urls_other_sources_never_choose_the_target(
    pyproject: Path, monkeypatch: pytest.MonkeyPatch, target: str | None, env: dict[str, str], rule: str
) -> None:
    """pytest-base-url's ini base_url and PYTEST_BASE_URL name another project's URL (a web app's): where
    they disagree with the rule, one line names both; where they agree, or --base-url chooses, the run goes on."""
    monkeypatch.setenv("PETSTORE_PRODUCTION_API_KEY", PRODUCTION_KEY)
    monkeypatch.setenv("PETSTORE_API_KEY", STAGING_KEY)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    for where in ("PYTEST_BASE_URL", "base_url in pytest.ini"):
        foreign = [(where, "http://127.0.0.1:3000/v1")]
        with pytest.raises(TargetConfigError) as err:
            resolve_with(pyproject, target, foreign=foreign)
        assert str(err.value) == (
            f"base URL conflict: {where} names http://127.0.0.1:3000/v1, but the suite would judge {rule}; "
            "pytest-base-url's settings never choose the suite's target: pass --base-url to choose"
        )
        chosen = resolve_with(pyproject, target, foreign=foreign, base_url="http://127.0.0.1:3000/v1")
        assert chosen is not None and chosen.base_url == "http://127.0.0.1:3000/v1"
        if target is not None or env:
            url = rule.split(" ", 1)[0]
            agreeing = resolve_with(pyproject, target, foreign=[(where, url + "/")])
            assert agreeing is not None and agreeing.base_url == url


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


def test_blank_key_is_missing(pyproject: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PETSTORE_PRODUCTION_API_KEY", "   ")
    with pytest.raises(TargetConfigError, match="PETSTORE_PRODUCTION_API_KEY is not set"):
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
        (
            [],
            {"PYTEST_BASE_URL": "http://127.0.0.1:7/v1", "PETSTORE_BASE_URL": "http://127.0.0.1:8/v1"},
            "base URL conflict: PYTEST_BASE_URL names http://127.0.0.1:7/v1, but the suite would judge "
            "http://127.0.0.1:8/v1 (from PETSTORE_BASE_URL)",
        ),
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


@contextlib.contextmanager
def listener() -> Iterator[tuple[str, list[bytes]]]:
    """A loopback port that records the first bytes of every connection made to it; its base URL."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    seen: list[bytes] = []
    done = threading.Event()

    def accept() -> None:
        while not done.is_set():
            try:
                connection, _ = server.accept()
            except TimeoutError:
                continue
            with connection:
                connection.settimeout(2)
                try:
                    seen.append(connection.recv(65536))
                except OSError:
                    seen.append(b"")

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}/v1", seen
    finally:
        done.set()
        thread.join(timeout=5)
        server.close()


def test_the_ini_base_url_of_another_project_never_gets_the_production_key(tmp_path: Path) -> None:
    """Issue 47: a project whose ini sets pytest-base-url's base_url (its web app, for pytest-playwright)
    ran ``--contract-target production``, and 226 requests carrying the production key reached the ini's
    URL.  Now nothing reaches it: one usage line names both URLs."""
    with listener() as (web_app, seen):
        project = tmp_path / "project"
        project.mkdir()
        (project / "pyproject.toml").write_text(
            f'[tool.pytest.ini_options]\nbase_url = "{web_app}"\n\n'
            "[tool.petstore_contract.targets.production]\n"
            'base-url = "http://127.0.0.1:9/v1"\nkey-env = "PETSTORE_PRODUCTION_API_KEY"\nread-only = true\n',
            encoding="utf-8",
        )
        config = ("-c", str(project / "pyproject.toml"), f"--rootdir={project}")
        env = {"PETSTORE_PRODUCTION_API_KEY": PRODUCTION_KEY}
        done = run_pytest(*config, "--contract-target", "production", env=env, cwd=project)
        time.sleep(0.5)  # a request in flight would have arrived by now
    assert done.returncode == 4, done.stdout[-3000:] + done.stderr[-3000:]
    assert done.stderr.strip().splitlines() == [
        f"ERROR: base URL conflict: base_url in pyproject.toml names {web_app}, but the suite would judge "
        "http://127.0.0.1:9/v1 (from the production target's base-url in pyproject.toml); pytest-base-url's "
        "settings never choose the suite's target: pass --base-url to choose"
    ]
    assert seen == [], f"{len(seen)} connections reached the ini's base_url"
    assert PRODUCTION_KEY not in done.stdout + done.stderr


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


def test_a_run_works_with_pytest_base_url_disabled(reference: BackgroundServer, tmp_path: Path) -> None:
    """``-p no:base_url`` once ended in INTERNALERROR ('Namespace' object has no attribute 'base_url'): the
    suite declares --base-url itself where pytest-base-url is not loaded, and runs on the embedded
    reference without it."""
    env = {"PETSTORE_API_KEY": PRODUCTION_KEY}
    given = run_pytest(
        "-p", "no:base_url", "--base-url", reference.base_url, "--collect-only", "-v", env=env, cwd=tmp_path
    )
    assert given.returncode == 0, given.stdout[-3000:] + given.stderr[-3000:]
    assert f"petstore target: custom {reference.base_url} (read-write)" in given.stdout
    reports = tmp_path / "reports"
    embedded = run_pytest(
        *("-p", "no:base_url", "-k", "test_orders", "--contract-profile", "quick", f"--contract-report-dir={reports}"),
        env={},
        cwd=tmp_path,
    )
    assert embedded.returncode == 0, embedded.stdout[-3000:] + embedded.stderr[-3000:]
    assert "INTERNALERROR" not in embedded.stdout + embedded.stderr
    assert json.loads((reports / "summary.json").read_text(encoding="utf-8"))["verdict"] == "conformant"


def test_a_spec_that_does_not_load_is_a_collection_error_not_an_internal_error(tmp_path: Path) -> None:
    """The embedded run loads the schemas while its reference starts; a broken spec still surfaces
    where it did before, as the generated tests' collection error."""
    broken = tmp_path / "openapi.yaml"
    broken.write_text("openapi: [broken\n", encoding="utf-8")
    done = run_pytest(f"--contract-report-dir={tmp_path / 'reports'}", env={"PETSTORE_SPEC": str(broken)}, cwd=tmp_path)
    assert done.returncode != 0
    assert "INTERNALERROR" not in done.stdout + done.stderr
    assert "ERROR collecting" in done.stdout and "test_generated.py" in done.stdout
