"""The end of a run, in the controller: every test's record, then the verdict, the reports, the exit code.

Each test leaves a ``TestRecord`` on its report (plain data, so it crosses from xdist workers); the
records, the run's counters (every process's) and its problems become clause outcomes and the
verdict (``verdict.decide``); every output is rendered from one redacted copy of the result.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from petstore_contract.core.records import CONFORMS, NOT_SELECTED, Exchange, RunResult, TestRecord
from petstore_contract.interface.clauses import CLAUSE_IDS
from petstore_contract.interface.jsontypes import JsonObject
from petstore_contract.judging import coverage, flicker, ids, reask, tally, waivers
from petstore_contract.judging.verdict import checked_reasons, clause_results, decide, server_errors_record, void
from petstore_contract.reporting import outputs
from petstore_contract.run import Run
from petstore_contract.transport import SERVER_ERRORS, merge_counters
from petstore_contract.transport.guard import EVENT_EXAMPLES, event_lines

RECORD_ATTR = "petstore_record"  # a plain dict on the TestReport: survives xdist serialisation
INTERRUPTED, USAGE_ERROR, INTERNAL_ERROR, NO_TESTS = 2, 4, 3, 5


class Finish:
    """The controller's view of the run: every test's record, then the verdict and the reports."""

    def __init__(self, config: pytest.Config, run: Run) -> None:
        self.config = config
        self.run = run
        self.records: dict[str, TestRecord] = {}
        self.result: RunResult | None = None
        self.paths: dict[str, Path] = {}
        self.waivers: tuple[str, list[waivers.Waiver]] | None = None  # (file, waivers) when one was read
        self.stopped_early = ""  # pytest's reason when -x or --maxfail stopped the run
        self.stopped_by: tuple[str, int] | None = None  # (signal name, tests selected) when a signal stopped it
        self.counters_file: Path | None = None  # where this process's counters went (written again after re-asks)
        self.unjudged = ""  # the pre-flight proved the target cannot be judged: the run's one reason

    def keep(self, report: pytest.TestReport) -> None:
        """A test's record (the controller sees the reports of every xdist worker too)."""
        data = getattr(report, RECORD_ATTR, None)
        if data is None:
            return
        record = TestRecord.from_dict(data)
        previous = self.records.get(record.nodeid)
        if previous is None or previous.outcome in (CONFORMS, NOT_SELECTED):
            self.records[record.nodeid] = record

    def problems(self, exitstatus: int, counters: JsonObject) -> list[str]:
        found = [self.unjudged] if self.unjudged else []
        if self.stopped_by is not None:
            name, selected = self.stopped_by
            if selected:
                found.append(f"stopped by {name} after {len(self.records)} of {selected} tests")
            else:
                found.append(f"stopped by {name} during collection, before any test ran")
        elif exitstatus == INTERRUPTED:
            found.append("the run was interrupted before every test ran")
        elif self.stopped_early:
            found.append(f"the run stopped early ({self.stopped_early}: -x or --maxfail) before every test ran")
        spent = self.run.guard.budget_spent()
        if spent:
            found.append(spent)
        breaker = self.run.guard.breaker_open() or ""
        first = self.run.guard.first_problem
        if self.unjudged:
            return found  # the pre-flight's reason says what the breaker and the key would
        if breaker or (
            first and counters.get("no_answer", 0) and counters.get("no_answer") == counters.get("requests")
        ):
            cause = "answered too slowly" if "still arriving" in (first or breaker) else "did not answer"
            found.append(f"the target {cause}: {first or breaker}")
        if self.key_rejected():
            found.append(
                f"the configured key was rejected on every operation asked with it: check {self.run.settings.key_env}"
            )
        return found

    def key_rejected(self) -> bool:
        """The valid key refused on every operation: nothing the target answered can be judged."""
        if self.unjudged:
            return False  # the pre-flight decided, and its reason is the run's
        refused = {f.test for r in self.records.values() for f in r.findings if f.clause == CLAUSE_IDS.auth_accepted}
        accepted = [r for r in self.records.values() if r.judged.get(CLAUSE_IDS.auth_accepted) == CONFORMS]
        return bool(refused) and not accepted

    def finish(self, exitstatus: int, processes: dict[str, int]) -> int:
        """The verdict, the reports, and the process's exit code (``processes``: how the run was laid out)."""
        if exitstatus in (USAGE_ERROR, INTERNAL_ERROR) or self.config.option.collectonly:
            return exitstatus  # the one-line error is the outcome; no report claims a verdict
        counters, server_errors = self._counters()
        records = list(self.records.values())
        unreported = server_errors_record(server_errors, records, self.run.settings.base_url)
        every = [*records, unreported] if unreported is not None else records
        # Every exchange of every process was judged by the pipeline (pipeline.py): what no test reported,
        # and every id its creates were answered with, held together (``ids``).
        pipeline = self._pipeline()
        universal = tally.unreported(pipeline.findings, every)
        every = [*every, universal] if universal is not None else every
        twice = ids.handed_twice(list(pipeline.handed))
        every = [*every, twice.record] if twice.record is not None else every
        # Problems first: asking the findings again never hides one.  It can only tell a 5xx of the
        # deployment from the service's (``flicker``): those findings are set aside, and the run says why.
        problems = self.problems(exitstatus, counters)
        reasked = reask.again(every, self.run.transport, self._reask_blocked(exitstatus))
        aside = flicker.set_aside(reasked.records)
        if aside.problem:
            problems.append(aside.problem)
        records, judged = aside.records[: len(records)], aside.records
        if reasked.sent:
            counters = self._recounted()
        events = event_lines(counters)
        counters.pop(EVENT_EXAMPLES, None)
        facts = self.run.facts() | _timing(self.run.settings.started) | counters | processes
        facts["reasked"] = reasked.sent
        pipeline = self._pipeline()  # the re-asks' answers judged too
        facts["judged"], facts["unanswered"] = pipeline.judged, pipeline.unanswered
        rows = checked_reasons(clause_results(judged), _count(counters, "unknown_writes"))
        if self.unjudged:
            rows = void(rows, self.unjudged)  # what the pre-flight's answers showed is judged by nothing
        elif self.key_rejected():
            rows = void(rows, f"the configured key was rejected ({self.run.settings.key_env})")
        warnings = [
            *events,
            *([twice.cause] if twice.cause else []),
            *(w for r in self.records.values() for w in r.warnings),
        ]
        if self.run.redact.note:
            warnings.append(self.run.redact.note)
        # The boundary: whatever produced a string (a check, Schemathesis, the target's echo), every
        # output is rendered from this redacted copy.
        self.result = self.run.redact.scrub(
            decide(rows, facts=facts, problems=problems, records=records, warnings=warnings, cause=twice.cause)
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

    def _pipeline(self) -> tally.Tally:
        """The pipeline's judgements and findings, every process's (from the files beside their counters)."""
        return tally.merge(self.run.settings.shared_dir or None, self.run.pipeline.to_dict())

    def _reask_blocked(self, exitstatus: int) -> str:
        """Why no finding may be asked again ("" when they may)."""
        if exitstatus == INTERRUPTED or self.stopped_by is not None:
            return "the run was interrupted"
        if self.unjudged:
            return self.unjudged
        if self.key_rejected():
            return f"the configured key was rejected ({self.run.settings.key_env})"
        return ""

    def _recounted(self) -> JsonObject:
        """The run's counters again, with the re-asks this process sent (and their coverage)."""
        if self.counters_file is not None:
            self.run.guard.write_counters(self.counters_file)
        return self._counters()[0]

    def _counters(self) -> tuple[JsonObject, list[Exchange]]:
        """The run's counters (every process's) and the 5xx answers its processes kept."""
        shared = self.run.settings.shared_dir
        if not shared:
            return self.run.guard.counters(), self.run.guard.server_errors()
        counters: JsonObject = merge_counters(shared)
        kept = counters.pop(SERVER_ERRORS, None)
        return counters, [Exchange.from_dict(data) for data in kept if isinstance(data, dict)] if isinstance(
            kept, list
        ) else []

    def finish_terminal(self) -> None:
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is None or self.result is None:
            return
        for line in outputs.final_lines(self.result, self.paths):
            reporter.write_line(
                line, bold=line is not None and line.startswith(("Conformant", "Not conformant", "Inconclusive"))
            )


def _count(counters: JsonObject, name: str) -> int:
    """A counter of the run (0 when it has none)."""
    value = counters.get(name)
    return value if isinstance(value, int) else 0


def _timing(started: float) -> JsonObject:
    finished = time.time()
    return {"started": _iso(started), "finished": _iso(finished), "duration_s": round(finished - started, 2)}


def _iso(moment: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(moment))
