"""The pytest plugin (entry point ``pytest11``): options, the run, clause links, records, the verdict.

It acts only on runs that collect the contract suite, so the project's own tests (``selftests/``)
run without starting a server or writing reports.  Each test leaves a ``TestRecord`` on its
report (plain data, so it crosses from xdist workers); the controller turns the records into
clause outcomes and the verdict, writes the reports and sets the exit code from the verdict.
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
import time
from collections.abc import Generator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import pytest

from petstore_contract import certify, coverage, heap, options, outputs, reask, waivers
from petstore_contract.clauses import registry, section_markers
from petstore_contract.expect import JUDGE_KEY, Judge, judge_of
from petstore_contract.outcome import record_of
from petstore_contract.record import INCONCLUSIVE, Exchange, RunResult, TestRecord
from petstore_contract.run import Run, RunSettings, install
from petstore_contract.sidecar import MODULES as SIDECAR_MODULES
from petstore_contract.sidecar import (
    NAME_ENV,
    ChildSession,
    Sidecar,
    child_settings,
    children_for,
    key_of,
    module_of,
    usable_cores,
)
from petstore_contract.spec import suite_dir
from petstore_contract.target import KEY_ENV, TargetConfigError, resolve
from petstore_contract.transport import SERVER_ERRORS, TargetProblem, merge_counters
from petstore_contract.verdict import clause_results, decide, server_errors_record, void

# A target this far away (the pre-flight request's time) gets the stateful chain in a child process.
CHILD_ROUND_TRIP = 0.025
RUN_KEY = pytest.StashKey[Run]()
STATE_KEY = pytest.StashKey["Controller"]()
RECORD_ATTR = "petstore_record"  # a plain dict on the TestReport: survives xdist serialisation
INTERRUPTED, USAGE_ERROR, INTERNAL_ERROR, NO_TESTS = 2, 4, 3, 5


def pytest_addoption(parser: pytest.Parser) -> None:
    options.add_to(parser)


# -- the run ----------------------------------------------------------------------------------------


def is_contract_run(config: pytest.Config) -> bool:
    if hasattr(config, "workerinput"):
        return "petstore_settings" in config.workerinput
    suite = suite_dir().resolve()
    args = config.args or [str(Path.cwd())]
    for arg in args:
        if config.option.pyargs and arg.split("::", 1)[0].startswith("petstore_contract"):
            return True
        path = Path(arg.split("::", 1)[0]).resolve()
        if path == suite or suite in path.parents or (path in suite.parents and not config.option.pyargs):
            return path == suite or suite in path.parents or _testpaths_include(config, suite)
    return False


def _testpaths_include(config: pytest.Config, suite: Path) -> bool:
    paths = config.getini("testpaths") or []
    return any((config.rootpath / p).resolve() == suite for p in paths)


def pytest_configure(config: pytest.Config) -> None:
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
    if not is_contract_run(config):
        return
    # Before anything starts (the embedded reference): a malformed waivers file is a usage error.
    in_charge = not hasattr(config, "workerinput") and child_settings() is None
    option = config.option
    refused = certify.refusal(option, config.args) if in_charge and option.petstore_certify else ""
    if refused:
        raise pytest.UsageError(refused)
    try:
        waived = (
            waivers.for_run(option.petstore_waivers, config.rootpath, option.petstore_certify) if in_charge else None
        )
    except waivers.WaiverError as exc:
        raise pytest.UsageError(str(exc)) from None
    heap.relax()
    # A clean-up, not unconfigure: pytest's own last full collections (unraisable exceptions) run
    # before clean-ups, and find the long-lived objects still frozen.
    config.add_cleanup(heap.restore)
    settings, key, embedded = _settings(config)
    run = Run(settings, key)
    install(run)
    config.stash[RUN_KEY] = run
    if child_settings() is not None:
        run.produces_shared = False
        config.pluginmanager.register(ChildSession(run.guard, settings.shared_dir), "petstore-child")
    elif not hasattr(config, "workerinput"):
        config.stash[STATE_KEY] = controller = Controller(config, run, embedded)
        controller.waivers = waived
        config.pluginmanager.register(controller, "petstore-controller")
    config.option.base_url = settings.base_url
    # Failures carry their own text (FailureRepr); native tracebacks for the rest spare pytest's
    # source parsing, which CPython 3.11 does not survive while another thread compiles.
    config.option.tbstyle = "native"


def _settings(config: pytest.Config) -> tuple[RunSettings, str, Any]:
    worker = getattr(config, "workerinput", None)
    given = worker["petstore_settings"] if worker is not None else child_settings()
    if given is not None:
        try:
            settings = RunSettings(**given)
        except TypeError as exc:
            raise pytest.UsageError(f"unusable run settings from the parent process: {exc}") from None
        return settings, os.environ.get(settings.key_env, ""), None
    option = config.option
    options.check(option)
    try:
        target = resolve(
            base_url=option.base_url,
            target_name=option.petstore_target,
            read_only=option.petstore_read_only,
            allow_writes=option.petstore_allow_writes,
            pyproject=config.rootpath / "pyproject.toml",
        )
    except TargetConfigError as exc:
        raise pytest.UsageError(str(exc)) from None
    if option.petstore_certify and (target.read_only if target is not None else option.petstore_read_only):
        raise pytest.UsageError(certify.READ_ONLY_REFUSED)
    embedded = None
    if target is None:
        target, embedded = _start_embedded(option.petstore_read_only)
    budget = option.petstore_run_budget
    shared = tempfile.mkdtemp(prefix="petstore-run-")
    settings = RunSettings(
        target_name=target.name,
        base_url=target.base_url,
        key_env=target.key_env,
        read_only=target.read_only,
        profile=option.petstore_profile,
        seed=option.petstore_seed,
        run_id=secrets.token_hex(3),
        timeout=option.petstore_timeout,
        max_body_bytes=option.petstore_max_body,
        trip_after=option.petstore_trip_after,
        budget=budget,
        deadline=time.time() + budget if budget else None,
        concurrency=option.petstore_concurrency,
        verify=option.petstore_ca_bundle or True,
        client_cert=option.petstore_client_cert,
        client_key=option.petstore_client_key,
        use_proxy_env=not option.petstore_no_proxy_env,
        shared_dir=shared,
        record_dir=str(Path(option.petstore_record).resolve()) if option.petstore_record else "",
    )
    return settings, target.api_key, embedded


def _start_embedded(read_only: bool) -> tuple[Any, Any]:
    from petstore_contract.reference.child import ChildServer
    from petstore_contract.target import Target

    key = secrets.token_urlsafe(24)
    server = ChildServer(key)  # listening already; it accepts once its process is up
    # xdist workers inherit the environment; the key never goes on a command line.
    os.environ[KEY_ENV] = key
    return Target("embedded", server.base_url, key, read_only), server


def pytest_configure_node(node: Any) -> None:
    """xdist: each worker gets the controller's settings (the key stays in its variable)."""
    run = node.config.stash.get(RUN_KEY, None)
    if run is not None:
        node.workerinput["petstore_settings"] = run.settings.to_dict()


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    state = config.stash.get(STATE_KEY, None)
    if state is not None and state.result is not None:
        junit = outputs.rewrite_junit(state.result, config)
        if junit is not None:
            state.paths["junit"] = junit
        state.finish_terminal()
    if state is not None:
        state.stop_sidecars()
        if state.embedded is not None:
            state.embedded.stop()
    run = config.stash.get(RUN_KEY, None)
    if run is not None:
        run.close()
        install(None)
    if state is not None and run is not None and run.settings.shared_dir:
        # The run's shared files (set-up results, counters) hold answers of the target: they go
        # with the run, once every worker and child process has finished.
        shutil.rmtree(run.settings.shared_dir, ignore_errors=True)


# -- collection: clause links and selection -----------------------------------------------------------


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    run = config.stash.get(RUN_KEY, None)
    if run is None:
        return
    clauses = registry()
    problems: list[str] = []
    covered: set[str] = set()
    suite = suite_dir().resolve()
    for item in items:
        if suite not in Path(str(item.path)).resolve().parents:
            continue
        ids = clause_ids(item)
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
        if run.read_only and item.get_closest_marker("writes"):
            item.add_marker(pytest.mark.skip(reason="not selected: read-only run (this test has to POST)"))
    if whole_suite_selected(config):
        missing = sorted(set(clauses) - covered - {"generated.other"})
        if len(items) > len(clauses) and missing:
            problems += [f"clause {cid!r} has no test" for cid in missing]
    if problems:
        raise pytest.UsageError("contract suite and clause registry disagree: " + "; ".join(problems))


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    if session.config.stash.get(RUN_KEY, None) is not None:
        heap.freeze_long_lived()


def will_run(item: pytest.Item) -> bool:
    """A selected test that no skip marker (read-only, ...) keeps from running."""
    return not any(mark.name == "skip" for mark in item.iter_markers())


def whole_suite_selected(config: pytest.Config) -> bool:
    """No -k, -m or --deselect, and not --collect-only: every collected test will run."""
    option = config.option
    return not (option.keyword or option.markexpr or option.deselect or option.collectonly)


def clause_ids(item: pytest.Item) -> list[str]:
    return list(dict.fromkeys(cid for mark in item.iter_markers("clause") for cid in mark.args))


# -- fixtures -----------------------------------------------------------------------------------------


def _run_of(config: pytest.Config) -> Run:
    run = config.stash.get(RUN_KEY, None)
    if run is None:
        pytest.skip("not a contract run")
    return run


@pytest.fixture(scope="session")
def run(pytestconfig: pytest.Config) -> Run:
    return _run_of(pytestconfig)


@pytest.fixture(scope="session")
def api(run: Run) -> Any:
    return run.api


@pytest.fixture(scope="session")
def read_only(run: Run) -> bool:
    return run.read_only


@pytest.fixture
def judge(request: pytest.FixtureRequest) -> Judge:
    """Judges each clause of a test on its own (see ``expect``); the plugin reads it after the test."""
    return judge_of(request.node)


# -- running and recording ----------------------------------------------------------------------------


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    run = item.config.stash.get(RUN_KEY, None)
    if run is None:
        return
    spent = run.guard.budget_spent()
    if spent:
        from petstore_contract.record import BUDGET, undecided

        raise undecided(tuple(clause_ids(item)), BUDGET, f"{spent}; test not run")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    run = item.config.stash.get(RUN_KEY, None)
    deferring = run if run is not None and item.get_closest_marker("deferred") is not None else None
    if deferring is not None:
        deferring.defer()
    if run is not None:
        run.take_examined()  # what an earlier test left: each test counts its own judgements
    try:
        try:
            result = yield
        except BaseException:
            if deferring is not None:
                deferring.drop_deferred()
            raise
        if deferring is not None:
            deferring.judge_deferred()
    finally:
        if run is not None:
            for clause, exchanges in run.take_examined().items():  # the generated cases judged
                judge_of(item).count(clause, exchanges)
    judge = item.stash.get(JUDGE_KEY, None)
    if judge is not None:
        judge.finish()  # the test's violations, each on its clause, once every clause was judged
    return result


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    run = item.config.stash.get(RUN_KEY, None)
    if run is None:
        return report
    # Captured output (Hypothesis' and Schemathesis' own prints among it) reaches the terminal,
    # JUnit and pytest-html through the report's sections.
    report.sections = [(title, run.redact(text)) for title, text in report.sections]
    if call.when not in ("setup", "call"):
        return report
    if call.when == "setup" and report.passed:
        return report
    record = record_of(item.nodeid, tuple(clause_ids(item)), call, report, item.stash.get(JUDGE_KEY, None))
    setattr(report, RECORD_ATTR, record.to_dict())
    if report.failed:
        # pytest types longrepr as its own classes; FailureRepr offers the same reading interface.
        report.longrepr = cast(Any, FailureRepr(run.redact(_failure_text(record))))
    elif report.skipped and isinstance(report.longrepr, tuple):
        path, line, reason = report.longrepr
        report.longrepr = (path, line, run.redact(str(reason)))
    return report


class FailureRepr:
    """A failure's text whose first line pytest shows as the failure's one-line message.

    pytest's short summary and JUnit's ``message`` read ``longrepr.reprcrash.message``; the whole
    text is the evidence.  (Under xdist a report's longrepr travels as its text.)
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.reprcrash = _Crash(text.splitlines()[0] if text else "")

    def toterminal(self, out: Any) -> None:
        for line in self.text.splitlines():
            out.line(line)

    def __str__(self) -> str:
        return self.text


class _Crash:
    def __init__(self, message: str) -> None:
        self.message, self.path, self.lineno = message, "", 0


def _failure_text(record: TestRecord) -> str:
    """First line: the clause and the broken expectation (JUnit's message); then the evidence."""
    lines = [f.summary() for f in record.findings] or [record.detail]
    for finding in record.findings[:3]:
        if finding.exchange is not None:
            exchange = finding.exchange
            lines += [
                "",
                f"{finding.clause}: replay: {exchange.curl()}",
                f"  answered HTTP {exchange.status}: {exchange.response_body[:500]}",
            ]
    return "\n".join(lines)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    run = session.config.stash.get(RUN_KEY, None)
    if run is None:
        return
    shared = run.settings.shared_dir
    counters_file = None
    if shared:
        # The worker id from xdist's workerinput, not its environment variable: a suite run started
        # from inside an xdist worker (the self-tests under -n) inherits that variable.
        worker = getattr(session.config, "workerinput", {}).get("workerid")
        name = os.environ.get(NAME_ENV) or worker or "controller"
        counters_file = Path(shared) / f"counters-{name}.json"
        run.guard.write_counters(counters_file)
    state = session.config.stash.get(STATE_KEY, None)
    if state is not None:
        state.counters_file = counters_file
        # -x or --maxfail stopped the run: the tests after the stop never ran, and their clauses are
        # not "not selected" (a choice of the user) but undecided: the run cannot say "conformant".
        state.stopped_early = str(session.shouldfail or "")
        session.exitstatus = state.finish(int(exitstatus))


class Controller:
    """The controller's view of the run: every test's record, then the verdict and the reports."""

    def __init__(self, config: pytest.Config, run: Run, embedded: Any) -> None:
        self.config = config
        self.run = run
        self.embedded = embedded
        self.records: dict[str, TestRecord] = {}
        self.result: RunResult | None = None
        self.paths: dict[str, Path] = {}
        self.preflight = ""
        self.sidecars: dict[str, list[Sidecar]] = {}  # module name -> its child processes
        self.placed: dict[str, Sidecar] = {}  # a selected test's node id -> the child that runs it
        self.round_trip = 0.0  # seconds the pre-flight request took
        self.waivers: tuple[str, list[waivers.Waiver]] | None = None  # (file, waivers) when one was read
        self.stopped_early = ""  # pytest's reason when -x or --maxfail stopped the run
        self.counters_file: Path | None = None  # where this process's counters went (written again after re-asks)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Every test's record (the controller sees the reports of every xdist worker too)."""
        data = getattr(report, RECORD_ATTR, None)
        if data is None:
            return
        record = TestRecord.from_dict(data)
        previous = self.records.get(record.nodeid)
        if previous is None or previous.outcome in ("conforms", "not_selected"):
            self.records[record.nodeid] = record

    def header(self) -> list[str]:
        return [self.run.redact(line) for line in self._header()]

    def _header(self) -> list[str]:
        run = self.run
        lines = [
            f"petstore target: {run.target.describe()}",
            f"petstore run: profile {run.settings.profile}, seed {run.settings.seed} (replay: --contract-seed "
            f"{run.settings.seed}), run id {run.settings.run_id}, concurrency {run.settings.concurrency}",
        ]
        if run.redact.note:
            lines.append(f"petstore note: {run.redact.note}")
        if self.preflight:
            lines.append(f"petstore PROBLEM: {self.preflight}")
        elif self.run.settings.concurrency > 1:
            where = self.children() or "every test in this process"
            embedded = self.embedded is not None
            start_up = " (including what was left of the embedded reference's start-up)" if embedded else ""
            lines.append(f"petstore pre-flight: {self.round_trip * 1000:.0f} ms{start_up}; {where}")
        return lines

    def start_sidecars(self) -> None:
        """The Hypothesis-driven modules in child processes of their own (``sidecar``), started now so
        that they collect while this process does: one child near the target (the pre-flight
        request took less than ``CHILD_ROUND_TRIP``, or the embedded reference), the module's
        number far from it, none on a single core (``sidecar.children_for``).  Not at
        ``--concurrency 1`` (today's order), not under xdist (the workers are the parallelism), not
        with ``--child-processes none`` and not for ``--collect-only``.
        """
        option = self.config.option
        distributed = getattr(option, "dist", "no") != "no" and getattr(option, "numprocesses", None)
        inline = option.petstore_child_processes == "none"
        if self.run.settings.concurrency <= 1 or distributed or option.collectonly or inline:
            return
        # The embedded reference is on loopback: its pre-flight time is what was left of its start-up.
        near = self.embedded is not None or self.round_trip < CHILD_ROUND_TRIP
        settings = self.run.settings.to_dict()
        for name, far_children in SIDECAR_MODULES.items():
            module = suite_dir() / name
            count = children_for(far_children, near, usable_cores())
            if module.is_file() and count:
                self.sidecars[name] = [Sidecar(module, settings, self.run.redact, n + 1) for n in range(count)]

    def children(self) -> str:
        """Where the child processes run what, e.g. "test_stateful.py in 2 child processes"."""
        counts = {name: len(children) for name, children in self.sidecars.items() if children}
        return ", ".join(f"{name} in {n} child process{'es' if n > 1 else ''}" for name, n in counts.items())

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        """A concurrent run orders its tests by what they wait on: the generated tests first (Python
        work while the tables of the targeted tests are sent in the background, see ``Run.start``),
        the targeted tests next, and last the tests that wait for a child process."""
        if self.run.settings.concurrency > 1:
            items.sort(key=self._order)

    def _order(self, item: pytest.Item) -> int:
        if module_of(item) in self.sidecars:
            return 2
        return 0 if item.get_closest_marker("deferred") is not None else 1

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """Deal each module's selected tests out among its children; stop the children with none."""
        for name, children in self.sidecars.items():
            selected = [item for item in session.items if module_of(item) == name and will_run(item)]
            for number, child in enumerate(children):
                share = selected[number :: len(children)]
                self.placed |= {item.nodeid: child for item in share}
                if share:
                    child.select([key_of(item) for item in share])
                else:
                    child.stop()
            children[:] = [child for child in children if child in self.placed.values()]

    @pytest.hookimpl(tryfirst=True)
    def pytest_pyfunc_call(self, pyfuncitem: pytest.Function) -> bool | None:
        """A test that runs in a child process: wait for it there and raise what it raised."""
        sidecar = self.placed.get(pyfuncitem.nodeid)
        if sidecar is None:
            return None
        error, examined = sidecar.outcome(key_of(pyfuncitem))
        for clause, exchanges in examined.items():
            judge_of(pyfuncitem).count(clause, exchanges)
        if error is not None:
            raise error
        return True

    def stop_sidecars(self) -> None:
        for children in self.sidecars.values():
            for sidecar in children:
                sidecar.stop()
        self.sidecars.clear()
        self.placed.clear()

    def check_target(self) -> str:
        """One request before the run, so an unusable target or key is named once, in one line."""
        started = time.monotonic()
        try:
            answer = self.run.api.get("/pets", params={"limit": 1})
        except TargetProblem as exc:
            return (self.embedded.problem() if self.embedded is not None else "") or str(exc)
        finally:
            self.round_trip = time.monotonic() - started
        if answer.status == 401:
            return f"the configured key was rejected (401 to GET /pets): check {self.run.settings.key_env}"
        return ""

    def problems(self, exitstatus: int, counters: dict[str, Any]) -> list[str]:
        found = []
        if exitstatus == INTERRUPTED:
            found.append("the run was interrupted before every test ran")
        elif self.stopped_early:
            found.append(f"the run stopped early ({self.stopped_early}: -x or --maxfail) before every test ran")
        spent = self.run.guard.budget_spent()
        if spent:
            found.append(spent)
        breaker = self.run.guard.breaker_open() or ""
        first = self.run.guard.first_problem
        if breaker or (
            first and counters.get("no_answer", 0) and counters.get("no_answer") == counters.get("requests")
        ):
            found.append(f"the target did not answer: {first or breaker}")
        if self.key_rejected():
            found.append(
                f"the configured key was rejected on every operation asked with it: check {self.run.settings.key_env}"
            )
        return found

    def key_rejected(self) -> bool:
        """The valid key refused on every operation: nothing the target answered can be judged."""
        refused = {f.test for r in self.records.values() for f in r.findings if f.clause == "auth.accepted"}
        accepted = [r for r in self.records.values() if r.judged.get("auth.accepted") == "conforms"]
        return bool(refused) and not accepted

    def finish(self, exitstatus: int) -> int:
        if exitstatus in (USAGE_ERROR, INTERNAL_ERROR) or self.config.option.collectonly:
            return exitstatus  # the one-line error is the outcome; no report claims a verdict
        counters, server_errors = self._counters()
        records = list(self.records.values())
        unreported = server_errors_record(server_errors, records, self.run.settings.base_url)
        # Problems first: asking the findings again must never change the verdict.
        problems = self.problems(exitstatus, counters)
        every = [*records, unreported] if unreported is not None else records
        reasked = reask.again(every, self.run.transport, self._reask_blocked(exitstatus))
        records, judged = reasked.records[: len(records)], reasked.records
        if reasked.sent:
            counters = self._recounted()
        facts = self.run.facts() | _timing(self.run.settings.started) | counters | self._processes()
        facts["reasked"] = reasked.sent
        rows = clause_results(judged)
        if self.key_rejected():
            rows = void(rows, f"the configured key was rejected ({self.run.settings.key_env})")
        warnings = [w for r in self.records.values() for w in r.warnings]
        if self.run.redact.note:
            warnings.append(self.run.redact.note)
        # The boundary: whatever produced a string (a check, Schemathesis, the target's echo), every
        # output is rendered from this redacted copy.
        self.result = self.run.redact.scrub(
            decide(rows, facts=facts, problems=problems, records=records, warnings=warnings)
        )
        if self.run.settings.shared_dir:
            merged = coverage.merge(self.run.settings.shared_dir)
            self.result.coverage = coverage.report(merged, self.result.clauses, self.run.read_only)
        if self.waivers is not None:
            file, listed = self.waivers
            self.result.gate = waivers.gate(self.result, listed, datetime.now(UTC).date(), file).to_dict()
        self.paths = outputs.write_all(self.result, self.config)
        if exitstatus in (USAGE_ERROR, INTERNAL_ERROR, NO_TESTS):
            return exitstatus
        return self.result.process_exit_code

    def _reask_blocked(self, exitstatus: int) -> str:
        """Why no finding may be asked again ("" when they may)."""
        if exitstatus == INTERRUPTED:
            return "the run was interrupted"
        if self.key_rejected():
            return f"the configured key was rejected ({self.run.settings.key_env})"
        return ""

    def _recounted(self) -> dict[str, Any]:
        """The run's counters again, with the re-asks this process sent (and their coverage)."""
        if self.counters_file is not None:
            self.run.guard.write_counters(self.counters_file)
        return self._counters()[0]

    def _processes(self) -> dict[str, Any]:
        return {"preflight_ms": round(self.round_trip * 1000), "child_processes": self.children() or "none"}

    def _counters(self) -> tuple[dict[str, Any], list[Exchange]]:
        """The run's counters (every process's) and the 5xx answers its processes kept."""
        shared = self.run.settings.shared_dir
        if not shared:
            return self.run.guard.counters(), self.run.guard.server_errors()
        counters = merge_counters(shared)
        return counters, [Exchange.from_dict(data) for data in counters.pop(SERVER_ERRORS)]

    def finish_terminal(self) -> None:
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is None or self.result is None:
            return
        for line in outputs.final_lines(self.result, self.paths):
            reporter.write_line(
                line, bold=line is not None and line.startswith(("Conformant", "Not conformant", "Inconclusive"))
            )


def _timing(started: float) -> dict[str, Any]:
    finished = time.time()
    return {"started": _iso(started), "finished": _iso(finished), "duration_s": round(finished - started, 2)}


def _iso(moment: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(moment))


def pytest_sessionstart(session: pytest.Session) -> None:
    """One request before the run, so an unusable target or key is named once, in one line."""
    state = session.config.stash.get(STATE_KEY, None)
    if state is None:
        return
    # The pre-flight waits for the target's answer (on the embedded reference, for its process to
    # start: 0.15-0.2 s); the schemas collection needs load first, so that wait overlaps work.
    if state.embedded is not None:
        state.run.load_schemas_ahead()
    state.preflight = state.check_target()
    if not state.preflight:
        state.start_sidecars()
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    quiet = session.config.option.verbose < 0  # pytest shows no header then: the problem still shows
    if state.preflight and quiet and reporter is not None:
        reporter.write_line(state.run.redact(f"petstore PROBLEM: {state.preflight}"))


def pytest_report_header(config: pytest.Config) -> list[str]:
    state = config.stash.get(STATE_KEY, None)
    return state.header() if state is not None else []


__all__ = ["INCONCLUSIVE"]
