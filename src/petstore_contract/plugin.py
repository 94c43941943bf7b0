"""The pytest plugin: options, the target (or the embedded reference), fixtures, clause links.

It acts only on runs that collect the contract suite (``tests/``), so the project's own
tests (``selftests/``) run without starting a server or writing reports.
"""

from __future__ import annotations

import os
import secrets
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from petstore_contract import guard, profiles
from petstore_contract.clauses import registry, section_markers
from petstore_contract.client import ContractClient, TargetError
from petstore_contract.redaction import Redactor
from petstore_contract.reporting import ReportPlugin, add_report_options
from petstore_contract.target import KEY_ENV, Target, TargetConfigError, resolve

ROOT = Path(__file__).resolve().parents[2]
SUITE_DIR = ROOT / "tests"
STATE_KEY = pytest.StashKey["RunState"]()


class RunState:
    """What one run knows: its target, its client, and the embedded server when it owns one."""

    def __init__(self, target: Target, embedded: Any = None) -> None:
        self.target = target
        self.embedded = embedded
        self.redact = Redactor(target.api_key)
        self.started = time.monotonic()
        self.preflight: str | None = None

    def metadata(self) -> dict[str, str]:
        """What a report may say about the target: name, base URL, mode (never the key)."""
        return {"target": self.target.name, "base_url": self.target.base_url, "mode": self.target.mode}


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("petstore", "Pet Store contract suite")
    group.addoption("--target", dest="petstore_target", help="a named target from pyproject.toml (staging, production)")
    group.addoption("--read-only", action="store_true", dest="petstore_read_only", help="send no POST")
    group.addoption(
        "--allow-writes", action="store_true", dest="petstore_allow_writes", help="let a read-only target be written"
    )
    group.addoption(
        "--contract-profile",
        dest="petstore_profile",
        default="default",
        choices=sorted(profiles.PROFILES),
        help="depth of the generated tests: quick, default (CI gate) or deep (nightly)",
    )
    group.addoption(
        "--contract-seed",
        dest="petstore_seed",
        type=int,
        default=profiles.DEFAULT_SEED,
        help=f"seed of the generated tests (default {profiles.DEFAULT_SEED})",
    )
    group.addoption(
        "--request-timeout",
        dest="petstore_timeout",
        type=float,
        default=10.0,
        help="seconds to wait for each answer (default 10)",
    )
    group.addoption("--ca-bundle", dest="petstore_ca_bundle", help="CA bundle to verify the target's TLS certificate")
    add_report_options(group)
    group.addoption(
        "--run-budget",
        dest="petstore_run_budget",
        type=float,
        default=None,
        metavar="SECONDS",
        help="seconds for the whole run; once spent, the remaining tests fail at once (default: none)",
    )
    group.addoption(
        "--max-body-bytes",
        dest="petstore_max_body",
        type=int,
        default=guard.MAX_BODY_BYTES,
        metavar="BYTES",
        help=f"read at most this much of an answer body (default {guard.MAX_BODY_BYTES})",
    )
    group.addoption(
        "--circuit-breaker",
        dest="petstore_trip_after",
        type=int,
        default=guard.TRIP_AFTER,
        metavar="N",
        help=f"send nothing more after N requests in a row got no answer (default {guard.TRIP_AFTER}; 0: never)",
    )


def is_contract_run(config: pytest.Config) -> bool:
    for arg in config.args or [str(SUITE_DIR)]:
        path = Path(arg.split("::", 1)[0]).resolve()
        if path == SUITE_DIR or SUITE_DIR in path.parents or path in SUITE_DIR.parents:
            return True
    return False


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "clause(*ids): the clauses of clauses.toml that this test checks")
    config.addinivalue_line("markers", "writes: the test sends POST requests (skipped in read-only runs)")
    config.addinivalue_line("markers", "generated: a Schemathesis (property-based or stateful) test")
    config.addinivalue_line("markers", "must: checks a MUST clause")
    config.addinivalue_line("markers", "should: checks a SHOULD clause")
    config.addinivalue_line("markers", "rfc: checks a clause that comes from an HTTP RFC")
    for name in section_markers():
        section = name.removeprefix("section_").replace("_", ".")
        config.addinivalue_line("markers", f"{name}: checks a clause of interface document §{section}")
    if not is_contract_run(config):
        return
    _check_positive("--request-timeout", config.option.petstore_timeout)
    _check_bounds(config)
    state = _start_target(config)
    _install_guard(config)
    config.stash[STATE_KEY] = state
    config.option.base_url = state.target.base_url
    config.pluginmanager.register(ReportPlugin(config, state.target, state.redact), "petstore-reporting")
    profiles.set_current(
        profiles.RunConfig(
            profile=profiles.PROFILES[config.option.petstore_profile],
            seed=config.option.petstore_seed,
            request_timeout=config.option.petstore_timeout,
            read_only=state.target.read_only,
        )
    )


def _check_positive(name: str, value: float) -> None:
    if not value > 0:
        raise pytest.UsageError(f"{name} must be a positive number of seconds, got {value}")


def _check_bounds(config: pytest.Config) -> None:
    if config.option.petstore_run_budget is not None:
        _check_positive("--run-budget", config.option.petstore_run_budget)
    if config.option.petstore_max_body < 1:
        raise pytest.UsageError(f"--max-body-bytes must be at least 1, got {config.option.petstore_max_body}")
    if config.option.petstore_trip_after < 0:
        raise pytest.UsageError(f"--circuit-breaker must be 0 or more, got {config.option.petstore_trip_after}")


def _install_guard(config: pytest.Config) -> None:
    """The run's budget and breaker; xdist workers share the controller's deadline."""
    run_guard = guard.Guard.starting_now(config.option.petstore_run_budget, config.option.petstore_trip_after)
    worker = getattr(config, "workerinput", None)
    if worker is not None and "petstore_deadline" in worker:
        run_guard.deadline = worker["petstore_deadline"]
    guard.install(run_guard)
    guard.configure_session(
        verify=config.option.petstore_ca_bundle or True, max_body_bytes=config.option.petstore_max_body
    )


def _start_target(config: pytest.Config) -> RunState:
    worker = getattr(config, "workerinput", None)
    if worker is not None and "petstore_base_url" in worker:
        key_env = worker.get("petstore_key_env", KEY_ENV)
        target = Target(
            worker["petstore_target"],
            worker["petstore_base_url"],
            os.environ[key_env],
            worker["petstore_read_only"],
            key_env,
        )
        return RunState(target)
    try:
        target = resolve(
            base_url=config.option.base_url,
            target_name=config.option.petstore_target,
            read_only=config.option.petstore_read_only,
            allow_writes=config.option.petstore_allow_writes,
            pyproject=ROOT / "pyproject.toml",
        )
    except TargetConfigError as exc:
        raise pytest.UsageError(str(exc)) from None
    if target is not None:
        return RunState(target)
    return _start_embedded(read_only=config.option.petstore_read_only)


def _start_embedded(read_only: bool) -> RunState:
    from petstore_contract.reference import BackgroundServer, build_app

    key = secrets.token_urlsafe(24)
    server = BackgroundServer(build_app(key)).start()
    # xdist workers inherit the environment; the key never goes on a command line.
    os.environ[KEY_ENV] = key
    return RunState(Target("embedded", server.base_url, key, read_only), embedded=server)


def pytest_configure_node(node: Any) -> None:
    """xdist: workers check the controller's target (and its embedded server)."""
    state = node.config.stash.get(STATE_KEY, None)
    if state is not None:
        node.workerinput["petstore_base_url"] = state.target.base_url
        node.workerinput["petstore_target"] = state.target.name
        node.workerinput["petstore_read_only"] = state.target.read_only
        node.workerinput["petstore_key_env"] = state.target.key_env  # the variable's name, never the key
        node.workerinput["petstore_deadline"] = guard.current().deadline


def pytest_unconfigure(config: pytest.Config) -> None:
    state = config.stash.get(STATE_KEY, None)
    if state is not None and state.embedded is not None:
        state.embedded.stop()


def pytest_report_header(config: pytest.Config) -> list[str]:
    state = config.stash.get(STATE_KEY, None)
    if state is None:
        return []
    run = profiles.current()
    lines = [
        f"petstore target: {state.target.describe()}",
        f"petstore generated tests: profile {run.profile.name}, seed {run.seed} (replay: --contract-seed {run.seed})",
    ]
    state.preflight = _preflight(config, state)
    if state.preflight:
        lines.append(f"petstore PROBLEM: {state.preflight}")
    return lines


def _preflight(config: pytest.Config, state: RunState) -> str | None:
    """One request before the run, so an unusable target is named once, in one line."""
    client = _new_client(config, state)
    try:
        answer = client.get("/pets", params={"limit": 1})
    except TargetError as exc:
        return f"{exc}; every test that needs the target will fail"
    if answer.status == 401:
        return f"the target answered 401 to the configured key: check {KEY_ENV} (or the target's key variable)"
    return None


# -- collection: clause links and selection markers ---------------------------------------------


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    state = config.stash.get(STATE_KEY, None)
    if state is None:
        return
    clauses = registry()
    problems: list[str] = []
    covered: set[str] = set()
    for item in items:
        if SUITE_DIR not in Path(str(item.path)).parents:
            continue
        ids = [cid for mark in item.iter_markers("clause") for cid in mark.args]
        if not ids:
            problems.append(f"{item.nodeid} names no clause")
        for cid in ids:
            if cid not in clauses:
                problems.append(f"{item.nodeid} names unknown clause {cid!r}")
                continue
            covered.add(cid)
            for name in clauses[cid].marker_names:
                item.add_marker(name)
            item.user_properties.append(("clause", cid))
        if state.target.read_only and item.get_closest_marker("writes"):
            item.add_marker(pytest.mark.skip(reason="read-only run: this test has to POST"))
    if _whole_suite_collected(config):
        problems += [f"clause {cid!r} has no test" for cid in sorted(set(clauses) - covered)]
    if problems:
        raise pytest.UsageError("contract suite and clause registry disagree: " + "; ".join(problems))


def _whole_suite_collected(config: pytest.Config) -> bool:
    return all(Path(arg.split("::", 1)[0]).resolve() in (SUITE_DIR, ROOT) for arg in config.args) and not (
        config.option.keyword or config.option.deselect
    )


# -- fixtures -------------------------------------------------------------------------------------


def _new_client(config: pytest.Config, state: RunState) -> ContractClient:
    return ContractClient(
        state.target.base_url,
        state.target.api_key,
        timeout=config.option.petstore_timeout,
        verify=config.option.petstore_ca_bundle or True,
        max_body_bytes=config.option.petstore_max_body,
    )


@pytest.fixture(scope="session")
def run_state(pytestconfig: pytest.Config) -> RunState:
    state = pytestconfig.stash.get(STATE_KEY, None)
    if state is None:
        pytest.skip("not a contract run")
    return state


@pytest.fixture(scope="session")
def api(pytestconfig: pytest.Config, run_state: RunState) -> Iterator[ContractClient]:
    client = _new_client(pytestconfig, run_state)
    pytestconfig.stash[CLIENT_KEY] = client
    yield client
    client.session.close()


CLIENT_KEY = pytest.StashKey[ContractClient]()


@pytest.fixture(scope="session")
def api_headers(run_state: RunState) -> dict[str, str]:
    """For Schemathesis calls: the valid credential."""
    return {"Authorization": f"Bearer {run_state.target.api_key}"}


@pytest.fixture(scope="session")
def request_timeout(pytestconfig: pytest.Config) -> float:
    return float(pytestconfig.option.petstore_timeout)


@pytest.fixture(scope="session")
def read_only(run_state: RunState) -> bool:
    return run_state.target.read_only


def _is_schemathesis_failure(exc: BaseException) -> bool:
    from schemathesis.core.failures import FailureGroup

    return isinstance(exc, FailureGroup)


def _clause_line(item: pytest.Item, ids: list[str] | None = None) -> str:
    """Which clauses of the interface document the failing test checks (for vendors)."""
    clauses = registry()
    if ids is None:
        ids = [cid for mark in item.iter_markers("clause") for cid in mark.args]
    ids = [cid for cid in ids if cid in clauses]
    if len(ids) == 1:
        c = clauses[ids[0]]
        return f"violates clause {c.id} ({c.section}, {c.level}): {c.statement}"
    return "checks clauses: " + ", ".join(f"{cid} ({clauses[cid].section})" for cid in ids)


# -- reporting hooks ------------------------------------------------------------------------------


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> bool | None:
    """Once the run budget is spent, each remaining test fails at once, without set-up or requests."""
    spent = guard.current().budget_spent() if item.config.stash.get(STATE_KEY, None) else None
    if spent is None or item.get_closest_marker("skip"):
        return None
    spent += "; test not run"
    hook = item.ihook
    hook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    for when in ("setup", "call", "teardown"):
        call = pytest.CallInfo.from_call(partial(_fail_if_call, when, spent), when=when)  # type: ignore[arg-type]
        hook.pytest_runtest_logreport(report=hook.pytest_runtest_makereport(item=item, call=call))
    hook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
    return True


def _fail_if_call(when: str, message: str) -> None:
    if when == "call":
        pytest.fail(message, pytrace=False)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item: pytest.Item) -> None:
    # Exchanges of the test body only: fixture set-up (seeding) would bury the failing request.
    client = item.config.stash.get(CLIENT_KEY, None)
    if client is not None:
        client.start_test()


# tryfirst: the outermost wrapper, so that Schemathesis' own report hook has already run.
@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    state = item.config.stash.get(STATE_KEY, None)
    if state is None:
        return
    client = item.config.stash.get(CLIENT_KEY, None)
    if report.failed and client is not None and client.exchanges:
        shown = client.exchanges[-3:]
        text = "\n\n".join(exchange.render() for exchange in shown)
        report.sections.append((f"HTTP exchanges (last {len(shown)}, key redacted)", text))
    _finish_longrepr(item, call, report, state)
    report.sections = [(title, state.redact(body)) for title, body in report.sections]


@pytest.hookimpl(trylast=True)
def pytest_exception_interact(node: pytest.Item, call: pytest.CallInfo[None], report: pytest.TestReport) -> None:
    """Schemathesis rewrites a failure's text here, after makereport: make it ours (and redacted) again."""
    state = node.config.stash.get(STATE_KEY, None)
    if state is not None and isinstance(node, pytest.Item) and report.failed:
        _finish_longrepr(node, call, report, state)


def _finish_longrepr(
    item: pytest.Item, call: pytest.CallInfo[None], report: pytest.TestReport, state: RunState
) -> None:
    if isinstance(report.longrepr, tuple):  # a skip: (path, line, reason)
        path, line, reason = report.longrepr
        report.longrepr = (path, line, state.redact(reason))
        return
    if not report.failed or report.longrepr is None:
        return
    text = str(report.longrepr)
    problem = _target_problem(call)
    if problem is not None:
        # The target could not be asked: one line naming why, no clause (none was checked).
        report.longrepr = state.redact(f"target problem: {problem}")
        return
    if report.when == "setup" and call.excinfo is not None and call.excinfo.errisinstance(AssertionError):
        # A fixture's request got an answer it cannot use (e.g. not JSON): say so, not its code.
        report.longrepr = state.redact(f"set-up could not use the target's answer: {call.excinfo.value}")
        return
    if call.excinfo is not None and _is_schemathesis_failure(call.excinfo.value):
        # Schemathesis' own message (failures, response, curl) reads better than its traceback.
        from petstore_contract.generated import failed_clauses

        text = str(call.excinfo.value)
        broken = failed_clauses(call.excinfo.value)
        if broken and not text.startswith("violates clause"):
            text = "\n".join(_clause_line(item, [cid]) for cid in broken) + f"\n\n{text}"
    if report.when == "call" and not text.startswith(("violates clause", "checks clauses", "run budget")):
        text = f"{_clause_line(item)}\n\n{text}"
    report.longrepr = state.redact(text)


def _target_problem(call: pytest.CallInfo[None]) -> str | None:
    """One line for a test stopped by the target's transport (client or Schemathesis' requests)."""
    if call.excinfo is None:
        return None
    if call.excinfo.errisinstance(TargetError):
        return str(call.excinfo.value)
    found = guard.find_transport_error(call.excinfo.value)
    return guard.describe(found) if found is not None else None
