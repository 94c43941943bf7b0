"""The Markdown report: rows grouped, the targets, where the wall time went, the machine."""

from __future__ import annotations

import os
import platform
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib.metadata import version

from benchmarks.timing.machine import cores, git, load_average
from benchmarks.timing.plan import Plan
from benchmarks.timing.rows import FLOOR, STRICT_FLOOR, Measurement
from petstore_contract.run import DEFAULT_CONCURRENCY

TARGETS = {0: None, 20: 10.0, 100: 30.0}  # latency ms -> the ceiling for the default gate
EMBEDDED_TARGET = 5.0
FLOOR_FACTOR = 2.0


@dataclass
class Row:
    scenario: str
    latency_ms: float
    setting: str
    runs: list[Measurement]

    @property
    def seconds(self) -> float:
        return statistics.median(r.seconds for r in self.runs)

    @property
    def requests(self) -> int:
        return round(statistics.median(r.requests for r in self.runs))

    @property
    def writes(self) -> int:
        return round(statistics.median(r.writes for r in self.runs))

    def spread(self) -> str:
        if len(self.runs) == 1:
            return f"{self.seconds:.2f}"
        times = [r.seconds for r in self.runs]
        return f"{self.seconds:.2f} ({min(times):.2f}-{max(times):.2f})"

    def cpu(self) -> str:
        """The CPU seconds of the median run (by wall time), beside its wall time."""
        return f"{self.median_run().cpu:.2f}"

    def counts(self, attribute: str) -> str:
        values = sorted({getattr(r, attribute) for r in self.runs})
        return "/".join(str(v) for v in values)

    def verdicts(self) -> str:
        return " / ".join(dict.fromkeys(r.verdict for r in self.runs))

    def median_run(self) -> Measurement:
        return sorted(self.runs, key=lambda r: r.seconds)[(len(self.runs) - 1) // 2]


def group(measurements: Sequence[Measurement]) -> list[Row]:
    rows: dict[tuple[str, float, str], Row] = {}
    for m in measurements:
        rows.setdefault(
            (m.scenario, m.latency_ms, m.setting), Row(m.scenario, m.latency_ms, m.setting, [])
        ).runs.append(m)
    return list(rows.values())


def find(rows: Sequence[Row], scenario: str, latency: float, setting: str | None = None) -> Row | None:
    return next(
        (r for r in rows if r.scenario == scenario and r.latency_ms == latency and setting in (None, r.setting)), None
    )


def best_schemathesis(rows: Sequence[Row], latency: float) -> Row | None:
    candidates = [r for r in rows if r.scenario == "schemathesis CLI" and r.latency_ms == latency]
    return min(candidates, key=lambda r: r.seconds, default=None)


def table(rows: Sequence[Row]) -> list[str]:
    lines = [
        "| scenario | latency | concurrency / workers | runs | wall s, median (min-max) | CPU s | requests | writes "
        "| verdict | notes |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    best = {id(best_schemathesis(rows, r.latency_ms)) for r in rows}
    for row in rows:
        notes = "; ".join(dict.fromkeys(r.notes for r in row.runs if r.notes))
        if row.scenario in (FLOOR, STRICT_FLOOR):
            notes += f"; longest dependency chain {row.counts('chain')}"
        if len({m.tree for r in rows for m in r.runs}) > 1:
            notes += ("; " if notes else "") + f"suite version {row.counts('tree')}"
        others = max(r.others_cpu for r in row.runs)
        if others > 0.05:
            notes += ("; " if notes else "") + f"other processes took up to {others:.0%} of the CPUs"
        if row.scenario == "schemathesis CLI" and id(row) in best:
            notes = "**its best setting at this latency**" + (f"; {notes}" if notes else "")
        cells = [
            row.scenario,
            f"{row.latency_ms:g} ms",
            row.setting,
            str(len(row.runs)),
            row.spread(),
            row.cpu(),
            row.counts("requests"),
            row.counts("writes"),
            row.verdicts(),
            notes,
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def profile_table(rows: Sequence[Row]) -> list[str]:
    lines = [
        "| run | wall s | before the first request | requests in flight (busy) | nothing in flight between "
        "requests | after the last answer | mean in flight while busy "
        "| longest dependency chain: floor / lists keep their order |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        run = row.median_run()
        p = run.profile
        if p is None:
            continue
        chain = " / ".join(
            f"{n} ({n * row.latency_ms / 1000:.2f} s of latency)" if row.latency_ms else str(n) for n in p.chain
        )
        cells = [
            f"{row.scenario} @ {row.latency_ms:g} ms, {row.setting}",
            f"{p.wall:.2f}",
            f"{p.before_first:.2f}",
            f"{p.busy:.2f}",
            f"{p.idle:.2f}",
            f"{p.after_last:.2f}",
            f"{p.mean_in_flight:.1f}",
            chain,
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "Requests in flight at the server, mean over each second of the run (median run of each row):", ""]
    for row in rows:
        p = row.median_run().profile
        if p is not None:
            lines.append(
                f"- {row.scenario} @ {row.latency_ms:g} ms, {row.setting}: `{' '.join(_level(x) for x in p.timeline)}`"
            )
    slow = [row for row in rows if row.median_run().slowest]
    if slow:
        lines += ["", "Slowest tests (pytest `--durations`, median run of each row):", ""]
        for row in slow:
            tests = "; ".join(row.median_run().slowest)
            lines.append(f"- {row.scenario} @ {row.latency_ms:g} ms, {row.setting}: {tests}")
    return lines


def _level(in_flight: float) -> str:
    return f"{in_flight:.1f}" if in_flight < 9.95 else f"{in_flight:.0f}"


def goal(text: str, met: bool | None, detail: str) -> str:
    state = "not measured" if met is None else ("met" if met else "not met")
    return f"- {text}: **{state}** ({detail})"


def goals(rows: Sequence[Row]) -> list[str]:
    lines = []
    embedded = find(rows, "suite (embedded reference)", 0)
    if embedded:
        lines.append(
            goal(
                f"default gate on the embedded reference ≤ {EMBEDDED_TARGET:g} s",
                embedded.seconds <= EMBEDDED_TARGET,
                f"median {embedded.seconds:.2f} s",
            )
        )
    for latency, ceiling in TARGETS.items():
        row = find(rows, "suite", latency, str(DEFAULT_CONCURRENCY))
        if ceiling is not None and row:
            lines.append(
                goal(
                    f"default gate at {latency} ms per request ≤ {ceiling:g} s",
                    row.seconds <= ceiling,
                    f"median {row.seconds:.2f} s",
                )
            )
    suite, floor = find(rows, "suite", 100, str(DEFAULT_CONCURRENCY)), find(rows, FLOOR, 100)
    if suite and floor:
        ratio = suite.seconds / floor.seconds
        detail = f"{suite.seconds:.2f} s vs floor {floor.seconds:.2f} s: {ratio:.2f}x"
        strict = find(rows, STRICT_FLOOR, 100)
        if strict:
            detail += f"; {suite.seconds / strict.seconds:.2f}x of the floor whose lists keep their order"
            detail += f" ({strict.seconds:.2f} s)"
        lines.append(
            goal(
                f"within {FLOOR_FACTOR:g}x of the floor at 100 ms",
                ratio <= FLOOR_FACTOR,
                detail,
            )
        )
    serial, default, xdist = (
        find(rows, s, 0, c)
        for s, c in (("suite", "1"), ("suite", str(DEFAULT_CONCURRENCY)), ("suite -n 2 (xdist)", None))
    )
    if default and xdist:
        detail = f"writes {xdist.counts('writes')} with -n 2 vs {default.counts('writes')} without"
        detail += f" and {serial.counts('writes')} serial" if serial else ""
        versions = {r.tree for r in xdist.runs}
        same = [r.writes for r in default.runs if r.tree in versions]  # the same suite version only
        if not same:
            detail += " (measured on different suite versions)"
        grows = max(r.writes for r in xdist.runs) > max(same or [r.writes for r in default.runs])
        lines.append(goal("writes per run do not grow with -n 2", not grows, detail))
    throttled = find(rows, "suite vs throttling server", 0)
    if throttled:
        codes = {r.exit_code for r in throttled.runs}
        counts = ", ".join(
            f"{r.summary.get('throttled', '?')} throttled, {r.summary.get('throttle_wait_s', '?')} s"
            f" waited, {r.seconds:.1f} s"
            for r in throttled.runs
        )
        lines.append(
            goal(
                "a throttling server gets a conformant verdict (exit 0)",
                codes == {0},
                f"{throttled.verdicts()}; {counts}",
            )
        )
    for ms in sorted({r.latency_ms for r in rows if r.scenario == "schemathesis CLI"}):
        best, mine = best_schemathesis(rows, ms), find(rows, "suite", ms, str(DEFAULT_CONCURRENCY))
        if best and mine:
            lines.append(
                f"- side by side at {ms:g} ms: suite {mine.seconds:.2f} s ({mine.requests} requests) vs "
                f"Schemathesis at its best ({best.setting}) {best.seconds:.2f} s ({best.requests} requests, "
                f"{best.verdicts()})"
            )
    return lines


def machine(load_before: str, measurements: Sequence[Measurement], waited: bool) -> list[str]:
    packages = ("schemathesis", "hypothesis", "pytest", "pytest-xdist", "requests", "uvicorn", "starlette")
    versions = ", ".join(f"{p} {version(p)}" for p in packages)
    changed = [line for line in git("status", "--porcelain", "src", "tests").splitlines() if line.strip()]
    tree = f" plus uncommitted changes to {len(changed)} files in src/ and tests/" if changed else ""
    trees = list(dict.fromkeys(m.tree for m in measurements if m.tree))
    if len(trees) > 1:
        tree += f"; **the suite changed during the benchmark**: versions {', '.join(trees)} (rows say which)"
    elif trees:
        tree += f" (fingerprint {trees[0]}, the same for every run)"
    lines = [
        f"- date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; suite measured: the working tree, commit "
        f"{git('rev-parse', '--short', 'HEAD')}{tree}",
        f"- machine: {platform.platform()}, {cores()} usable cores ({os.cpu_count()} in total), "
        f"{platform.processor() or platform.machine()}",
        f"- load average (1, 5, 15 min): {load_before} when the benchmark started, {load_average()} at its end",
    ]
    if measurements:
        loads, shares = [m.load for m in measurements], [m.others_cpu for m in measurements]
        lines.append(
            ("- each run started once other processes used < 10% of the CPUs; " if waited else "- ")
            + "1-minute load average at the start "
            f"of a run (this benchmark's own previous run included): median {statistics.median(loads):.2f}, "
            f"at most {max(loads):.2f}; other processes' share of the CPUs during a run: median "
            f"{statistics.median(shares):.0%}, at most {max(shares):.0%}"
        )
    lines.append(f"- Python {platform.python_version()} ({platform.python_implementation()}); {versions}")
    return lines


def render(argv: Sequence[str], plan: Plan, measurements: Sequence[Measurement], load: str) -> str:
    rows = group(measurements)
    command = " ".join(["python benchmarks/bench.py", *argv])
    lines = ["# Benchmark: time to a verdict at real network distance", "", f"`{command}`", ""]
    lines += [*machine(load, measurements, not plan.smoke), "", "## Results", "", *table(rows)]
    if not plan.smoke:
        lines += ["", "## Targets", "", *goals(rows)]
    profiled = [r for r in rows if r.median_run().profile is not None or r.median_run().slowest]
    if profiled:
        lines += ["", "## Where the suite's wall time goes (the median run of each row, seconds)", ""]
        lines += [*profile_table(profiled), "", PROFILE_NOTE]
    lines += ["", NOTES.format(seed=plan.seed, concurrency=DEFAULT_CONCURRENCY)]
    return "\n".join(lines) + "\n"


PROFILE_NOTE = (
    "From the server's recording: *before the first request* is the suite process starting (interpreter, "
    "pytest, plugin, collection); *busy* is time with at least one request at the server (its latency "
    "included); *nothing in flight* is time between the first and last request when the server had nothing "
    "to do (the client computing, generating, judging); *after the last answer* is the verdict and the "
    "reports. The longest dependency chain (the floor's model) times the latency is what no client can beat."
)

NOTES = (
    "Notes: each run meets a fresh server (empty store, fresh key) in a thread of the benchmark's process; the "
    "latency is the server's (`latency_seconds`, an `asyncio.sleep` before every answer). Requests and writes "
    "are counted at that server (writes: methods other than GET/HEAD/OPTIONS), except the embedded reference, "
    "counted by the suite (`summary.json`). Suite rows use `--contract-profile default` (the gate); "
    "`concurrency` is `--contract-concurrency N` (default {concurrency}). The verdict is `summary.json`'s; "
    "Schemathesis' is its exit code, with the project's `spec/schemathesis.toml`, `--seed {seed}`, the key by `-H`. "
    "The floor replays, in another process, the requests recorded in the same repeat's default-concurrency "
    "suite run, over {concurrency} keep-alive `requests.Session` connections, with the dependency model of "
    "`bench.py`'s docstring; its time is the replay's only (no start-up). Wall times are medians of the runs; "
    "requests and writes list every distinct value seen. *CPU s* is the median run's user+sys CPU time of the "
    "processes it started (the suite's process and its children, the embedded reference and xdist workers "
    "among them: `resource.getrusage(RUSAGE_CHILDREN)`), not the serving thread of the benchmark's process."
)
