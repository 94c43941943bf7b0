"""The session object: one per pytest process of a contract run, owning it from configure to unconfigure.

Its methods are the plugin's hooks, registered once (``plugin.pytest_configure``); nothing else in
the package implements a hook.  A process plays one role:

- the **controller** (the process the user started): the pre-flight request, the header, every
  test's record, the verdict, the reports and the exit code (``finish``);
- an xdist **worker**: runs its tests and writes its counters.

The run starts no process of its own (the embedded reference's aside, which is the target): its
concurrency is the transport's pool of threads, and xdist's workers when the user asks for them.
Every role links tests to their clauses, starts set-up and the work sent ahead as soon as the
selection is known (``setup``, ``ahead``), and turns each test into a record (``classify``).
"""

from __future__ import annotations

import shutil
from collections.abc import Generator
from pathlib import Path
from typing import Any, cast

import pytest

from petstore_contract.core.records import BUDGET, TARGET, UNDECIDED, TestRecord, Undecided, undecided
from petstore_contract.interface.clauses import CLAUSE_IDS, registry
from petstore_contract.interface.spec import suite_dir
from petstore_contract.judging.expect import JUDGE_KEY, judge_of
from petstore_contract.plugin.classify import WARNING_SECTION, FailureRepr, failure_text, record_of, warned_only
from petstore_contract.plugin.finish import RECORD_ATTR, Finish
from petstore_contract.plugin.stopping import StopSignals
from petstore_contract.reporting import outputs
from petstore_contract.run import Run, ahead, heap, install, preflight, setup
from petstore_contract.run.selection import clause_ids, needed_writes, whole_suite_selected, will_run

CONTROLLER, WORKER = "controller", "worker"


class ContractSession:
    """The run's hooks, in the order pytest calls them."""

    def __init__(self, config: pytest.Config, run: Run, role: str, embedded: Any = None) -> None:
        self.config = config
        self.run = run
        self.role = role
        self.embedded = embedded  # the embedded reference server, when no target was given
        self.finishing = Finish(config, run) if role == CONTROLLER else None
        self.preflight = ""  # the one-line problem the pre-flight request found
        # Why the target cannot be judged, when the pre-flight proved it (``run/preflight.py``): every
        # test is then skipped with this one reason, and set-up sends nothing.  The controller decides;
        # an xdist worker reads it from its workerinput.
        self.unjudged = str(getattr(config, "workerinput", {}).get("petstore_unjudged", ""))
        self.round_trip = 0.0  # seconds the pre-flight request took
        self.session: pytest.Session | None = None  # the controller's, for a stop signal
        self.signals = StopSignals(self._stop) if role == CONTROLLER else None
        if self.signals is not None:
            self.signals.install()

    # -- start ---------------------------------------------------------------------------------------

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """xdist: each worker gets the controller's settings.

        A user's key stays in its variable, which workers inherit; the embedded reference's key,
        which is in no variable (the plugin leaves ``os.environ`` alone), travels in the
        workerinput, over xdist's channel: never on a command line.
        """
        node.workerinput["petstore_settings"] = self.run.settings.to_dict()
        node.workerinput["petstore_unjudged"] = self.unjudged
        if self.embedded is not None:
            node.workerinput["petstore_key"] = self.run.target.api_key

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        """One request before the run, so an unusable target or key is named once, in one line."""
        if self.role != CONTROLLER:
            return
        self.session = session
        # The pre-flight waits for the target's answer (on the embedded reference, for its process to
        # start: 0.15-0.2 s); the schemas collection needs load first, so that wait overlaps work.
        if self.embedded is not None:
            self.run.cases.load_schemas_ahead()
        self.preflight = self._check_target()
        if self.unjudged and self.finishing is not None:
            self.finishing.unjudged = self.unjudged
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        quiet = session.config.option.verbose < 0  # pytest shows no header then: the problem still shows
        if self.preflight and quiet and reporter is not None:
            reporter.write_line(self.run.redact(f"petstore PROBLEM: {self.preflight}"))

    def pytest_report_header(self, config: pytest.Config) -> list[str]:
        return [self.run.redact(line) for line in self._header()] if self.role == CONTROLLER else []

    # -- collection ----------------------------------------------------------------------------------

    def pytest_collectstart(self, collector: pytest.Collector) -> None:
        """In a run of the whole suite, set-up starts when collection reaches its first module, so
        that its round trips overlap the collection of the generated tests.  A run that selects
        tests (-k, -m, --deselect) or only collects keeps set-up for its first test: it may select none."""
        if isinstance(collector, pytest.Module) and whole_suite_selected(collector.config) and not self.unjudged:
            setup.start_set_up(self.run)

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        """Clause links first (the markers -m selects by); then a concurrent controller orders its
        tests by what they wait on."""
        self._link_clauses(config, items)
        if self.role == CONTROLLER and self.run.settings.concurrency > 1:
            items.sort(key=self._order)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """Once the selection is known: set-up (if it has not started), each table a selected test
        needs, the stateful walks (drawn here, sent on the run's pool); then the long-lived objects are
        frozen (``heap``).  The walks start early only in the controller of a concurrent run: an xdist
        worker starts each when its test runs, and ``--contract-concurrency 1`` keeps the tests' order."""
        runnable = [item for item in session.items if will_run(item)]
        if not session.config.option.collectonly and runnable and not self.unjudged:
            if not whole_suite_selected(session.config):
                # -k, -m, --deselect: set-up writes only what the selected tests judge.  (A whole-suite
                # run started set-up during collection, with every part: what the whole suite needs.)
                self.run.set_up_writes = needed_writes(runnable, suite_dir().resolve())
            setup.start_set_up(self.run)
            early = self.role == CONTROLLER and self.run.settings.concurrency > 1
            ahead.start_needed(self.run, runnable, starters=early)
        heap.freeze_long_lived()

    # -- each test -----------------------------------------------------------------------------------

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        clauses = tuple(clause_ids(item))
        if self.unjudged and clauses and item.get_closest_marker("skip") is None:
            # The pre-flight proved the target cannot be judged: no test sends a request, each is
            # skipped with the run's one reason (never a failure: it judged nothing).
            raise undecided(clauses, TARGET, self.unjudged)
        spent = self.run.guard.budget_spent()
        if spent:
            raise undecided(tuple(clause_ids(item)), BUDGET, f"{spent}; test not run")

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, object, object]:
        run = self.run
        deferring = item.get_closest_marker("deferred") is not None
        if deferring:
            run.cases.defer()
        run.cases.take_examined()  # what an earlier test left: each test counts its own judgements
        try:
            try:
                result = yield
            except BaseException:
                if deferring:
                    run.cases.drop_deferred()
                raise
            if deferring:
                judge_of(item).whole = True  # every case is judged before any finding is raised
                run.cases.judge_deferred()
        finally:
            for clause, exchanges in run.cases.take_examined().items():  # the generated cases judged
                judge_of(item).count(clause, exchanges)
        judge = item.stash.get(JUDGE_KEY, None)
        if judge is not None:
            judge.finish()  # the test's violations, each on its clause, once every clause was judged
        return result

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        # Failures of the contract tests carry their own text (FailureRepr, below), so pytest's
        # traceback is discarded: it is built natively, which spares pytest's source parsing, which
        # CPython 3.11 does not survive while another thread compiles.  The user's --tb is put back
        # at once and applies to every other test and to everything pytest prints.
        style, own = item.config.option.tbstyle, bool(clause_ids(item))
        if own:
            item.config.option.tbstyle = "native"
        try:
            report = yield
        finally:
            item.config.option.tbstyle = style
        stopped = self.run.guard.stopped() if self.role == WORKER else None
        if stopped:
            # The controller was stopped by a signal: an xdist worker ends after this test instead of
            # running the tests queued for it (their requests would not go out anyway).
            item.session.shouldstop = item.session.shouldfail = stopped
        # Captured output (Hypothesis' and Schemathesis' own prints among it) reaches the terminal,
        # JUnit and pytest-html through the report's sections.
        report.sections = [(title, self.run.redact(text)) for title, text in report.sections]
        if not own or call.when not in ("setup", "call") or (call.when == "setup" and report.passed):
            return report  # another project's test in the same session keeps pytest's report
        record = record_of(item.nodeid, tuple(clause_ids(item)), call, report, item.stash.get(JUDGE_KEY, None))
        setattr(report, RECORD_ATTR, record.to_dict())
        if report.failed and warned_only(record):
            # Only SHOULD clauses broken: a warning, so pytest's count, -x and --maxfail agree with the verdict.
            report.outcome, report.longrepr = "passed", None
            report.sections.append((WARNING_SECTION, self.run.redact(failure_text(record, self.run.settings.key_env))))
        elif report.failed and record.outcome == UNDECIDED and not record.findings:
            # The test judged nothing (the target did not answer it): skipped with its reason, never a
            # failure, in the terminal, JUnit and pytest-html alike (``record.notes`` say why).
            report.outcome = "skipped"
            report.longrepr = (str(item.path), item.location[1] or 0, self.run.redact(_skip_reason(record)))
        elif report.failed:
            # pytest types longrepr as its own classes; FailureRepr offers the same reading interface.
            report.longrepr = cast(Any, FailureRepr(self.run.redact(failure_text(record, self.run.settings.key_env))))
        elif report.skipped and isinstance(report.longrepr, tuple):
            path, line, reason = report.longrepr
            # pytest names the class of a skip that is not its own (``Undecided``): the reason stands alone.
            reason = str(reason).removeprefix(f"{Undecided.__module__}.{Undecided.__qualname__}: ")
            report.longrepr = (path, line, self.run.redact(reason))
        return report

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if self.finishing is not None:
            self.finishing.keep(report)

    # -- end -----------------------------------------------------------------------------------------

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        """A stop signal is raised wherever the main thread is: inside a ``threading.Condition`` wait
        (xdist's controller waiting on its queue) the KeyboardInterrupt comes out as "release unlocked
        lock", which pytest calls an internal error.  After a stop signal, any error of the loop is the
        stop it is (the run's verdict and reports follow as for any stop)."""
        try:
            return (yield)
        except Exception:
            if self.signals is not None and self.signals.name:
                raise KeyboardInterrupt(f"stopped by {self.signals.name}") from None
            raise

    @pytest.hookimpl(tryfirst=True)
    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        """A stop signal's traceback is cut to the handler's frame: pytest renders the whole stack it
        interrupted with its source (seconds, through Hypothesis), out of the few a CI system grants."""
        if self.signals is not None and self.signals.name:
            excinfo.traceback = excinfo.traceback[-1:]

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        """pytest-html renders its report in its own sessionfinish (trylast): the verdict is known by then."""
        if self.signals is not None:
            self.signals.finishing = True
        counters_file = None
        if self.run.settings.shared_dir:
            # The worker id from xdist's workerinput, not its environment variable: a suite run started
            # from inside an xdist worker (the self-tests under -n) inherits that variable.
            worker = getattr(session.config, "workerinput", {}).get("workerid")
            name = worker or "controller"
            counters_file = Path(self.run.settings.shared_dir) / f"counters-{name}.json"
            self.run.guard.write_counters(counters_file)
        if self.finishing is not None:
            self.finishing.counters_file = counters_file
            # -x or --maxfail stopped the run: the tests after the stop never ran, and their clauses are
            # not "not selected" (a choice of the user) but undecided: the run cannot say "conformant".
            if self.signals is not None and self.signals.name:
                self.finishing.stopped_by = (self.signals.name, session.testscollected)
            else:
                self.finishing.stopped_early = str(session.shouldfail or "")
            processes = {"preflight_ms": round(self.round_trip * 1000)}
            session.exitstatus = self.finishing.finish(int(exitstatus), processes)

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(self, config: pytest.Config) -> None:
        finishing = self.finishing
        if finishing is not None and finishing.result is not None:
            junit = outputs.rewrite_junit(finishing.result, config)
            if junit is not None:
                finishing.paths["junit"] = junit
            finishing.finish_terminal()
        if self.embedded is not None:
            self.embedded.stop()
        self.run.close()
        if self.signals is not None:
            self.signals.restore()
        install(None)
        if self.role == CONTROLLER and self.run.settings.shared_dir:
            # The run's shared files (set-up results, counters) hold answers of the target: they go
            # with the run, once every worker has finished.
            shutil.rmtree(self.run.settings.shared_dir, ignore_errors=True)

    # -- helpers -------------------------------------------------------------------------------------

    def _stop(self, name: str) -> None:
        """A stop signal: no request of the run goes out from now on, in any of its processes, and
        pytest runs no further test.  ``shouldfail`` too: Schemathesis' per-operation subtests swallow
        what a test raises (KeyboardInterrupt included) unless the session is failing."""
        reason = f"stopped by {name}"
        self.run.guard.stop(reason)
        self.run.transport.adapter.closing.set()  # a wait for a Retry-After ends at once
        if self.session is not None:
            self.session.shouldstop = self.session.shouldfail = reason

    def _link_clauses(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        """Each test of the suite marked by its clauses' markers; a test or clause left unlinked is a usage error."""
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
            if self.run.read_only and item.get_closest_marker("writes"):
                item.add_marker(pytest.mark.skip(reason="not selected: read-only run (this test has to POST)"))
        if whole_suite_selected(config):
            missing = sorted(set(clauses) - covered - {CLAUSE_IDS.generated_other})
            if len(items) > len(clauses) and missing:
                problems += [f"clause {cid!r} has no test" for cid in missing]
        if problems:
            raise pytest.UsageError("contract suite and clause registry disagree: " + "; ".join(problems))

    def _order(self, item: pytest.Item) -> int:
        """Generated tests first (Python work while the tables are sent in the background), the
        targeted tests next, last the tests that wait for work started on the run's pool (the
        stateful walks), which has gone on meanwhile."""
        if ahead.waits_for_started(item):
            return 2
        return 0 if item.get_closest_marker("deferred") is not None else 1

    def _check_target(self) -> str:
        """The pre-flight (``run/preflight.py``): an unusable target or key named once, in one line, and
        proved with the fewest requests before any test runs."""
        run = self.run
        found = preflight.check(
            run.api,
            key_env=run.settings.key_env,
            read_only=run.read_only,
            new_pet=lambda: run.new_pet("preflight", None),
        )
        self.round_trip = found.round_trip
        embedded = self.embedded.problem() if self.embedded is not None and found.problem else ""
        self.unjudged = run.redact(embedded or found.unjudged) if found.unjudged else ""
        return embedded or found.problem

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
        elif run.settings.concurrency > 1:
            start_up = " (including what was left of the embedded reference's start-up)" if self.embedded else ""
            lines.append(f"petstore pre-flight: {self.round_trip * 1000:.0f} ms{start_up}")
        return lines


def _skip_reason(record: TestRecord) -> str:
    """The one line a test that judged nothing is skipped with: its clauses' first reason."""
    note = record.notes[0] if record.notes else None
    return f"undecided: {note.reason}" if note is not None else "undecided"
