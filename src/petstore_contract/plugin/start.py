"""A contract run starts: markers, waivers, the run's settings and target, the session object.

Imported by the plugin's ``pytest_configure`` only once a session turns out to run the suite
(``plugin/__init__.py``), with everything the run needs.
"""

from __future__ import annotations

import os
import secrets
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from petstore_contract.commands import certify
from petstore_contract.core.records import TestRecord
from petstore_contract.interface.clauses import section_markers
from petstore_contract.interface.spec import suite_dir
from petstore_contract.judging import waivers
from petstore_contract.plugin import loaded, options
from petstore_contract.plugin.finish import RECORD_ATTR
from petstore_contract.plugin.session import CONTROLLER, WORKER, ContractSession
from petstore_contract.reporting import outputs
from petstore_contract.run import Run, RunSettings, heap, install
from petstore_contract.run.target import TargetConfigError, resolve


def contract_run(config: pytest.Config) -> None:
    _hypothesis_home_apart(config)
    # Before anything draws a case: the pool of constants Hypothesis draws from is the same in every
    # process and every kind of run (``loaded.py``).
    loaded.load_every_module()
    # The suite's markers exist in its own runs only: another project's session (``--markers``,
    # ``--strict-markers``) sees exactly the markers it registers itself.
    add_markers(config)
    # Before anything starts (the embedded reference): a malformed waivers file is a usage error.
    in_charge = not hasattr(config, "workerinput")
    option = config.option
    refused = certify.refusal(option, config.args) if in_charge and option.contract_certify else ""
    if refused:
        raise pytest.UsageError(refused)
    unwritable = outputs.unwritable(config) if in_charge else ""
    if unwritable:  # before anything is sent: a run whose reports cannot be written judged for nothing
        raise pytest.UsageError(unwritable)
    try:
        waived = (
            waivers.for_run(option.contract_waivers, config.rootpath, option.contract_certify) if in_charge else None
        )
    except waivers.WaiverError as exc:
        raise pytest.UsageError(str(exc)) from None
    heap.relax()
    # A clean-up, not unconfigure: pytest's own last full collections (unraisable exceptions) run
    # before clean-ups, and find the long-lived objects still frozen.
    config.add_cleanup(heap.restore)
    settings, key, embedded = _settings(config)
    run = Run(settings, key)
    install(run)  # the run's one home: ``run_of`` and the generated tests read it there
    _forget_test_modules()
    role = WORKER if hasattr(config, "workerinput") else CONTROLLER
    session = ContractSession(config, run, role, embedded)
    if session.finishing is not None:
        session.finishing.waivers = waived
    config.pluginmanager.register(session, "petstore-session")
    if session.finishing is not None and config.getoption("htmlpath", None) and config.pluginmanager.hasplugin("html"):
        _register_pytest_html(config, run, session)
    config.option.base_url = settings.base_url


def _hypothesis_home_apart(config: pytest.Config) -> None:
    """Hypothesis keeps its caches in ``.hypothesis/`` of the current directory: a run leaves nothing in
    the user's directory, and puts them in the user's cache directory instead (``cache_home``).  They
    are what Hypothesis computes the same in every run: the Unicode tables it draws text from (about
    2.5 s of CPU, half of a run's collection, when computed) and each module's constants, filed by the
    hash of its source; so a run draws the same cases with them or without.  Where no cache directory
    can be written (no ``$HOME``, a read-only one), a directory of the run's own, removed at its end.
    Its example database is off in every generated test (``database`` none in ``schemathesis.toml``,
    None in ``run/walks.py``): the seed alone fixes the cases.  A directory the user chose
    (``HYPOTHESIS_STORAGE_DIRECTORY``) is theirs."""
    if os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        return
    import hypothesis
    from hypothesis import configuration

    home = cache_home(hypothesis.__version__)
    own = home is None
    if home is None:
        home = tempfile.mkdtemp(prefix="petstore-hypothesis-")
    configuration.set_hypothesis_home_dir(home)

    def restore() -> None:
        configuration.set_hypothesis_home_dir(None)
        if own:
            shutil.rmtree(home, ignore_errors=True)

    config.add_cleanup(restore)


def cache_home(version: str) -> str | None:
    """The user's cache directory for Hypothesis ``version`` (``$XDG_CACHE_HOME`` or ``~/.cache``, the XDG
    base directories' rule), made if need be; None where it cannot be written."""
    xdg, user_home = os.environ.get("XDG_CACHE_HOME", ""), os.environ.get("HOME", "")
    # The rule ignores a relative XDG_CACHE_HOME; without an absolute HOME there is no cache directory.
    base = xdg if os.path.isabs(xdg) else os.path.join(user_home, ".cache") if os.path.isabs(user_home) else ""
    if not base:
        return None
    home = os.path.join(base, "petstore-contract", f"hypothesis-{version}")
    try:
        os.makedirs(home, exist_ok=True)
    except OSError:
        return None
    return home if os.access(home, os.W_OK | os.X_OK) else None


def add_markers(config: pytest.Config) -> None:
    for line in (
        "clause(*ids): the clauses of clauses.toml that this test judges",
        "writes: the test sends POST requests (not selected in read-only runs)",
        "generated: a Schemathesis (property-based or stateful) test",
        "deferred: a generated test whose cases are sent side by side while they are drawn",
        "must: judges a MUST clause",
        "should: judges a SHOULD clause",
        "rfc: judges a clause that comes from an HTTP RFC",
    ):
        config.addinivalue_line("markers", line)
    for name in section_markers():
        section = name.removeprefix("section_").replace("_", ".")
        config.addinivalue_line("markers", f"{name}: judges a clause of interface document §{section}")


def _forget_test_modules() -> None:
    """Drop the suite's test modules an earlier run of this process imported, so that this run's collection
    imports them afresh.  pytest reuses a module already in ``sys.modules``, and ``test_generated.py``
    builds its cases from the run at import: a second ``pytest.main`` in one process would otherwise draw
    the first run's cases (its seed, its profile, and its POSTs in a read-only run)."""
    suite = suite_dir().resolve()
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if file and Path(file).name.startswith("test_") and Path(file).resolve().parent == suite:
            del sys.modules[name]


def _register_pytest_html(config: pytest.Config, run: Run, session: ContractSession) -> None:
    """The contract in pytest-html's report, as pytest-html registers its own: controller only."""
    from petstore_contract.reporting.pytest_html_hooks import PytestHtmlContract

    finishing = session.finishing
    assert finishing is not None

    def record(report: pytest.TestReport) -> TestRecord | None:
        data = getattr(report, RECORD_ATTR, None)
        return TestRecord.from_dict(data) if data is not None else None

    hooks = PytestHtmlContract(run.facts(), run.redact, lambda: finishing.result, record)
    config.pluginmanager.register(hooks, "petstore-pytest-html")


def _settings(config: pytest.Config) -> tuple[RunSettings, str, Any]:
    worker = getattr(config, "workerinput", None)
    if worker is not None:
        given = worker["petstore_settings"]
        try:
            settings = RunSettings(**given)
        except TypeError as exc:
            raise pytest.UsageError(f"unusable run settings from the parent process: {exc}") from None
        # The embedded reference's key reaches a worker in its workerinput, never the environment.
        key = worker.get("petstore_key", "")
        return settings, key or os.environ.get(settings.key_env, ""), None
    option = config.option
    options.check(option)
    given, foreign = options.base_url_sources(config)
    try:
        target = resolve(
            base_url=given,
            foreign=foreign,
            target_name=option.contract_target,
            read_only=option.contract_read_only,
            allow_writes=option.contract_allow_writes,
            pyproject=config.rootpath / "pyproject.toml",
        )
    except TargetConfigError as exc:
        raise pytest.UsageError(str(exc)) from None
    if option.contract_certify and (target.read_only if target is not None else option.contract_read_only):
        raise pytest.UsageError(certify.READ_ONLY_REFUSED)
    embedded = None
    if target is None:
        target, embedded = _start_embedded(option.contract_read_only)
    budget = option.contract_run_budget
    shared = tempfile.mkdtemp(prefix="petstore-run-")
    settings = RunSettings(
        target_name=target.name,
        base_url=target.base_url,
        key_env=target.key_env,
        read_only=target.read_only,
        profile=option.contract_profile,
        seed=option.contract_seed,
        run_id=secrets.token_hex(3),
        timeout=option.contract_request_timeout,
        max_body_bytes=option.contract_max_body_bytes,
        circuit_breaker=option.contract_circuit_breaker,
        budget=budget,
        deadline=time.time() + budget if budget else None,
        concurrency=option.contract_concurrency,
        verify=option.contract_ca_bundle or True,
        client_cert=option.contract_client_cert,
        client_key=option.contract_client_key,
        use_proxy_env=not option.contract_no_proxy_env,
        shared_dir=shared,
        record_dir=str(Path(option.contract_record).resolve()) if option.contract_record else "",
    )
    return settings, target.api_key, embedded


def _start_embedded(read_only: bool) -> tuple[Any, Any]:
    from petstore_contract.reference.child import ChildServer
    from petstore_contract.run.target import Target

    key = secrets.token_urlsafe(24)
    server = ChildServer(key)  # listening already; it accepts once its process is up
    return Target("embedded", server.base_url, key, read_only), server
