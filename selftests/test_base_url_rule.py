"""One rule for where a run goes, and where its key goes (issue 47).

``--base-url`` > the named target's variable > its ``base-url`` in pyproject.toml > ``PETSTORE_BASE_URL`` >
the embedded reference.  pytest-base-url's other sources (its ini ``base_url``, ``PYTEST_BASE_URL``) never
choose the target: where one names another URL, the run stops with one usage line naming both, before any
request.  With pytest-base-url disabled (``-p no:base_url``) the suite declares ``--base-url`` itself.
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

from petstore_contract.interface.spec import suite_dir
from petstore_contract.reference import BackgroundServer, build_app
from petstore_contract.run.target import Target, TargetConfigError, resolve

STAGING_KEY = "staging-key-4c2e9a10"
PRODUCTION_KEY = "production-key-7d31b0f8"
PYPROJECT = """
[tool.petstore_contract.targets.production]
base-url = "https://petstore.example/v1"
key-env = "PETSTORE_PRODUCTION_API_KEY"
read-only = true
"""


@pytest.fixture
def pyproject(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in list(os.environ):
        if name.startswith("PETSTORE_") or name == "PYTEST_BASE_URL":
            monkeypatch.delenv(name)
    path = tmp_path / "pyproject.toml"
    path.write_text(PYPROJECT, encoding="utf-8")
    return path


def resolve_with(pyproject: Path, target: str | None = None, **options: object) -> Target | None:
    args: dict[str, object] = {"base_url": None, "read_only": False, "allow_writes": False, **options}
    return resolve(target_name=target, pyproject=pyproject, **args)  # type: ignore[arg-type]


def run_pytest(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """The suite by its path, with no PETSTORE_ variable nor PYTEST_BASE_URL but ``env``'s."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("PETSTORE_") and k != "PYTEST_BASE_URL"}
    return subprocess.run(
        [sys.executable, "-m", "pytest", str(suite_dir()), "-p", "no:cacheprovider", *args],
        cwd=cwd,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


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


def test_pytest_base_url_and_petstore_base_url_disagreeing_is_one_usage_line(tmp_path: Path) -> None:
    env = {"PYTEST_BASE_URL": "http://127.0.0.1:7/v1", "PETSTORE_BASE_URL": "http://127.0.0.1:8/v1"}
    done = run_pytest(env=env, cwd=tmp_path)
    assert done.returncode == 4, done.stdout[-3000:] + done.stderr[-3000:]
    assert done.stderr.strip().splitlines() == [
        "ERROR: base URL conflict: PYTEST_BASE_URL names http://127.0.0.1:7/v1, but the suite would judge "
        "http://127.0.0.1:8/v1 (from PETSTORE_BASE_URL); pytest-base-url's settings never choose the suite's "
        "target: pass --base-url to choose"
    ]
    assert not (tmp_path / "reports").exists(), "a usage error claims no verdict: no report"


@pytest.fixture(scope="module")
def reference() -> Iterator[BackgroundServer]:
    with BackgroundServer(build_app(PRODUCTION_KEY)) as server:
        yield server


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
