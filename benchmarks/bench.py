"""Time to a trustworthy verdict: the contract suite against Schemathesis' own CLI and the floor.

    python benchmarks/bench.py                # median of 3, every fault of the catalog; writes results.md
    python benchmarks/bench.py --quick        # 1 repeat, one fault per clause; a few minutes
    python benchmarks/bench.py --help

In one run, on one machine, each tool meets a fresh reference server (in a thread of this process,
127.0.0.1) built the same way, once as it is and once with 20 ms added to every answer:

- ``suite``: the README's main command, ``pytest tests --base-url URL`` (default profile), through
  ``selfcheck.run_suite``; the key in the environment.
- ``st``: ``schemathesis run spec/openapi.yaml --url URL --checks all --seed S``, otherwise Schemathesis'
  defaults; the key comes from a temporary schemathesis.toml reading ``${PETSTORE_API_KEY}``.
- ``st+project`` (``--project-cli``): the CLI with the project's ``spec/schemathesis.toml`` (the document's
  relaxations) and no ``--checks all``, which would override them: the fairest "Schemathesis alone".
- ``floor``: a bare loop of keep-alive ``requests.Session`` GETs (``/pets?limit=5``), as many as the suite
  sent, in its own process like the others; its time is the loop's.

Requests are counted at the server (``store.request_count``). Faults caught and compliant servers passed
come from one run of each tool against every server of the catalog, two at a time; the CLIs run there with
``--max-failures 1`` (the exit code, their verdict, is the same; a failing run just stops sooner).
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from urllib.parse import urlsplit

import requests

from petstore_contract.profiles import DEFAULT_SEED
from petstore_contract.reference import FAULTS, REFERENCE, VARIANTS, BackgroundServer, build_app
from petstore_contract.reference.variants import Variant
from petstore_contract.selfcheck import run_suite

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "spec" / "openapi.yaml"
PROJECT_TOML = ROOT / "spec" / "schemathesis.toml"
RESULTS = ROOT / "benchmarks" / "results.md"
KEY_ENV = "PETSTORE_API_KEY"
AUTH_TOML = 'headers = { Authorization = "Bearer ${PETSTORE_API_KEY}" }\n\n'
RUN_TIMEOUT = 900.0
REQUEST_TIMEOUT = 10.0
SLOW = replace(REFERENCE, name="reference+20ms", summary="the reference, 20 ms late", latency_seconds=0.020)
EMBEDDED, SLOW_SERVER = "embedded reference", "reference + 20 ms"
SERVERS: dict[str, Variant] = {EMBEDDED: REFERENCE, SLOW_SERVER: SLOW}
LOOPBACK = ("127.0.0.1", "::1", "localhost")
FAILURE_CODE = re.compile(r"❌ (ST\d{3}) ")  # the CLI's summary: "❌ ST202 Schema-valid request rejected: 1"


@dataclass(frozen=True)
class Outcome:
    """What a tool process said: exit code, wall time, what failed (suite: clauses; CLI: failure codes)."""

    exit_code: int
    seconds: float
    clauses: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Run:
    outcome: Outcome
    requests: int  # counted at the server


Action = Callable[[str, str], Outcome]  # (base_url, key) -> outcome


def log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def require_loopback(base_url: str) -> None:
    if urlsplit(base_url).hostname not in LOOPBACK:
        raise ValueError(f"the benchmark only talks to loopback servers, not {base_url}")


# -- the tools ------------------------------------------------------------------------------------


def suite_action(base_url: str, key: str) -> Outcome:
    run = run_suite(base_url, key, timeout=RUN_TIMEOUT)
    return Outcome(run.exit_code, run.seconds, frozenset(run.caught_clauses()))


def cli_command(base_url: str, config: Path, seed: int, project: bool, verdict_only: bool) -> list[str]:
    """``--checks all`` for the plain CLI; with the project's config the config decides (every check is on
    by default there, and an explicit ``--checks all`` would override its per-operation ``enabled = false``)."""
    beside = Path(sys.executable).parent / "schemathesis"  # the venv's, like the suite's interpreter
    executable = str(beside) if beside.exists() else shutil.which("schemathesis") or "schemathesis"
    command = [executable, "--config-file", str(config), "run", str(SPEC), "--url", base_url]
    command += ["--seed", str(seed), *([] if project else ["--checks", "all"])]
    return [*command, "--max-failures", "1"] if verdict_only else command


def cli_action(project: bool, seed: int, verdict_only: bool) -> Action:
    """The Schemathesis CLI in a fresh directory (its example database starts empty every run)."""

    def run(base_url: str, key: str) -> Outcome:
        with tempfile.TemporaryDirectory(prefix="petstore-bench-st-") as tmp:
            config = Path(tmp) / "schemathesis.toml"
            config.write_text(AUTH_TOML + (PROJECT_TOML.read_text(encoding="utf-8") if project else ""), "utf-8")
            command = cli_command(base_url, config, seed, project, verdict_only)
            env = {**os.environ, KEY_ENV: key}
            started = time.monotonic()
            done = subprocess.run(
                command, cwd=tmp, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT, check=False
            )
            return Outcome(done.returncode, time.monotonic() - started, frozenset(FAILURE_CODE.findall(done.stdout)))

    return run


def floor_loop(base_url: str, key: str, count: int, timeout: float = REQUEST_TIMEOUT) -> float:
    """``count`` keep-alive GET /pets?limit=5 on one session; the seconds they took. Fails on a non-200."""
    require_loopback(base_url)
    headers = {"Authorization": f"Bearer {key}"}
    with requests.Session() as session:
        started = time.perf_counter()
        for _ in range(count):
            answer = session.get(f"{base_url}/pets", params={"limit": 5}, headers=headers, timeout=timeout)
            if answer.status_code != 200:
                raise RuntimeError(f"the floor loop got {answer.status_code} from {base_url}")
        return time.perf_counter() - started


def floor_action(count: int) -> Action:
    """The floor loop in its own interpreter, like the suite and the CLI (no GIL shared with the server)."""

    def run(base_url: str, key: str) -> Outcome:
        command = [sys.executable, str(Path(__file__).resolve()), "--floor-worker", base_url, str(count)]
        env = {**os.environ, KEY_ENV: key}
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"the floor loop failed: {done.stderr[-500:]}")
        return Outcome(0, float(done.stdout.strip()))

    return run


def tool_action(tool: str, seed: int, verdict_only: bool) -> Action:
    if tool == "suite":
        return suite_action
    return cli_action(project=tool == "st+project", seed=seed, verdict_only=verdict_only)


def measure(action: Action, variant: Variant, fault: str | None = None) -> Run:
    """One tool against a fresh server; requests counted at the server."""
    key = "bench-" + secrets.token_urlsafe(18)
    app = build_app(key, variant, fault)
    with BackgroundServer(app) as server:
        outcome = action(server.base_url, key)
    return Run(outcome, app.state.store.request_count)


# -- phase 1: wall time and requests, serially, median of N ------------------------------------


@dataclass(frozen=True)
class Plan:
    tools: tuple[str, ...]
    repeats: dict[str, int]  # server -> timed runs
    faults: tuple[str, ...]
    parallel: int
    seed: int
    verdicts: bool


Timings = dict[tuple[str, str], list[Run]]  # (server, tool) -> runs


def time_tools(plan: Plan) -> Timings:
    """Every tool, then the floor with as many requests as the suite sent, on each server, N times."""
    timings: Timings = {}
    for repeat in range(1, max(plan.repeats.values()) + 1):
        for server in SERVERS:
            if repeat > plan.repeats[server]:
                continue
            for tool in plan.tools:
                _timed(timings, f"{repeat}/{plan.repeats[server]}", server, tool, tool_action(tool, plan.seed, False))
            suite_requests = timings[(server, "suite")][-1].requests
            _timed(timings, f"{repeat}/{plan.repeats[server]}", server, "floor", floor_action(suite_requests))
    return timings


def _timed(timings: Timings, step: str, server: str, tool: str, action: Action) -> None:
    run = measure(action, SERVERS[server])
    timings.setdefault((server, tool), []).append(run)
    seconds, code = run.outcome.seconds, run.outcome.exit_code
    log(f"timing {step} {server}: {tool} {seconds:.1f} s, {run.requests} requests, exit {code}")


# -- phase 2: faults caught and compliant servers passed, once per tool, in parallel -----------


Job = tuple[str, str, str]  # (tool, "fault" | "variant", name)
Verdicts = dict[Job, Run]


def fault_sample(quick: bool) -> tuple[str, ...]:
    """Every fault, or (quick) the first fault of each clause plus the generated-only ones."""
    if not quick:
        return tuple(FAULTS)
    firsts = {fault.clause: name for name, fault in reversed(FAULTS.items())}
    return tuple(name for name, fault in FAULTS.items() if name in firsts.values() or fault.generated_only)


def reused_verdicts(plan: Plan, timings: Timings) -> Verdicts:
    """Compliant servers that phase 1 already ran in full (the reference, and the slow variant if SLOW is it)."""
    same = {"reference": EMBEDDED} if SERVERS[EMBEDDED] == VARIANTS["reference"] else {}
    if replace(VARIANTS["slow"], name=SLOW.name, summary=SLOW.summary) == SLOW:
        same["slow"] = SLOW_SERVER
    # The least favourable of the repeats: one failing run is enough to fail the server.
    worst = {key: max(runs, key=lambda run: run.outcome.exit_code != 0) for key, runs in timings.items()}
    return {(tool, "variant", name): worst[(server, tool)] for tool in plan.tools for name, server in same.items()}


def run_verdicts(plan: Plan, reused: Verdicts) -> Verdicts:
    jobs = [(tool, "fault", name) for tool in plan.tools for name in plan.faults]
    variants = [(tool, "variant", name) for tool in plan.tools for name in VARIANTS]
    jobs += [job for job in variants if job not in reused]
    jobs.sort(key=lambda job: job[2] != "slow")  # the long ones first, so the pool ends together
    done = 0

    def one(job: Job) -> Run:
        nonlocal done
        tool, kind, name = job
        variant, fault = (REFERENCE, name) if kind == "fault" else (VARIANTS[name], None)
        run = measure(tool_action(tool, plan.seed, verdict_only=True), variant, fault)
        done += 1
        seconds, code = run.outcome.seconds, run.outcome.exit_code
        log(f"verdicts {done}/{len(jobs)}: {tool} on {kind} {name}: exit {code} in {seconds:.1f} s")
        return run

    with ThreadPoolExecutor(max_workers=plan.parallel) as pool:
        return reused | dict(zip(jobs, pool.map(one, jobs), strict=True))


def caught(tool: str, fault: str, run: Run, on_clause: bool) -> bool:
    if tool == "suite" and on_clause:
        return run.outcome.exit_code == 1 and FAULTS[fault].clause in run.outcome.clauses
    return run.outcome.exit_code != 0


# -- the report -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    seconds: float
    low: float
    high: float
    requests: int
    exit_codes: str

    @property
    def rate(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0


def summarise(runs: Sequence[Run]) -> Row:
    seconds = [r.outcome.seconds for r in runs]
    codes = "/".join(sorted({str(r.outcome.exit_code) for r in runs}))
    requests = round(statistics.median(r.requests for r in runs))
    return Row(statistics.median(seconds), min(seconds), max(seconds), requests, codes)


def timing_table(plan: Plan, timings: Timings) -> list[str]:
    lines = [
        "| server | tool | runs | wall s, median (min-max) | requests | requests/s | exit "
        "| suite wall ÷ tool wall | suite req/s ÷ tool req/s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for server in SERVERS:
        suite = summarise(timings[(server, "suite")])
        for tool in (*plan.tools, "floor"):
            row = summarise(timings[(server, tool)])
            cells = [server, tool, str(plan.repeats[server]), *_row_cells(row, None if tool == "suite" else suite)]
            lines.append("| " + " | ".join(cells) + " |")
    return lines


def _row_cells(row: Row, suite: Row | None) -> list[str]:
    cells = [f"{row.seconds:.2f} ({row.low:.2f}-{row.high:.2f})", str(row.requests), f"{row.rate:.0f}", row.exit_codes]
    if suite is None:
        return [*cells, "-", "-"]
    return [*cells, f"{suite.seconds / row.seconds:.2f}", f"{suite.rate / row.rate:.2f}"]


def count_caught(plan: Plan, verdicts: Verdicts, tool: str, on_clause: bool) -> int:
    return sum(caught(tool, f, verdicts[(tool, "fault", f)], on_clause) for f in plan.faults)


def meaningful_catches(plan: Plan, verdicts: Verdicts, tool: str) -> int:
    """Failing a faulty server only says something if the tool passes the reference (suite: on the clause)."""
    if "reference" not in compliant_passed(verdicts, tool):
        return 0
    return count_caught(plan, verdicts, tool, on_clause=tool == "suite")


def compliant_passed(verdicts: Verdicts, tool: str) -> list[str]:
    return [v for v in VARIANTS if verdicts[(tool, "variant", v)].outcome.exit_code == 0]


def verdict_table(plan: Plan, verdicts: Verdicts) -> list[str]:
    lines = [
        f"| tool | passes the reference | compliant servers passed of {len(VARIANTS)} | faults failed on (exit ≠ 0) "
        f"of {len(plan.faults)} | on the fault's clause | catches that mean something |",
        "|---|---|---|---|---|---|",
    ]
    for tool in plan.tools:
        passed = compliant_passed(verdicts, tool)
        failed = [f"{v} ({_why(verdicts[(tool, 'variant', v)])})" for v in VARIANTS if v not in passed]
        on_clause = str(count_caught(plan, verdicts, tool, True)) if tool == "suite" else "n/a (names no clause)"
        cells = [
            tool,
            "yes" if "reference" in passed else "**no**",
            f"{len(passed)}" + (f" (fails {', '.join(failed)})" if failed else ""),
            str(count_caught(plan, verdicts, tool, False)),
            on_clause,
            str(meaningful_catches(plan, verdicts, tool)),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _why(run: Run) -> str:
    return ", ".join(sorted(run.outcome.clauses)) or f"exit {run.outcome.exit_code}"


def missed_faults(plan: Plan, verdicts: Verdicts) -> list[str]:
    lines = []
    for tool in plan.tools:
        runs = {f: verdicts[(tool, "fault", f)] for f in plan.faults}
        missed = [f for f, run in runs.items() if not caught(tool, f, run, on_clause=tool == "suite")]
        lines.append(f"- `{tool}` does not fail on: {', '.join(f'`{f}`' for f in missed) or 'none'}")
    return lines


def goal_lines(plan: Plan, timings: Timings, verdicts: Verdicts | None) -> list[str]:
    fast, slow = (summarise(timings[(server, "suite")]) for server in SERVERS)
    floor = summarise(timings[(EMBEDDED, "floor")])
    lines = [
        _goal("full default gate on the embedded reference ≤ 15 s", fast.seconds <= 15, f"{fast.seconds:.1f} s"),
        _goal("full default gate against the 20 ms server ≤ 45 s", slow.seconds <= 45, f"{slow.seconds:.1f} s"),
        _goal(
            "requests/s within 2x of the floor (embedded reference)",
            fast.rate * 2 >= floor.rate,
            f"{fast.rate:.0f} vs {floor.rate:.0f} req/s: the floor is {floor.rate / fast.rate:.1f}x faster",
        ),
    ]
    return [*lines, _cli_goal(plan, fast, summarise(timings[(EMBEDDED, "st")]), verdicts)]


def _cli_goal(plan: Plan, suite: Row, cli: Row, verdicts: Verdicts | None) -> str:
    goal = "faster than the Schemathesis CLI default run while catching more faults"
    detail = f"suite {suite.seconds:.1f} s vs st {cli.seconds:.1f} s"
    if verdicts is None:
        return _goal(goal + " (faults not run)", suite.seconds < cli.seconds, detail)
    mine, theirs = meaningful_catches(plan, verdicts, "suite"), meaningful_catches(plan, verdicts, "st")
    raw = count_caught(plan, verdicts, "st", False)
    detail += f"; faults caught {mine} vs {theirs} (st exits non-zero on {raw}"
    detail += ", but on the reference too)" if "reference" not in compliant_passed(verdicts, "st") else ")"
    return _goal(goal, suite.seconds < cli.seconds and mine > theirs, detail)


def _goal(goal: str, met: bool, detail: str) -> str:
    return f"- {goal}: **{'met' if met else 'not met'}** ({detail})"


def load_average() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a"


def machine(load_before: str) -> list[str]:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    versions = ", ".join(f"{p} {version(p)}" for p in ("schemathesis", "hypothesis", "pytest", "requests", "uvicorn"))
    return [
        f"- date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; commit {_commit()}",
        f"- machine: {platform.platform()}, {cores} usable cores ({os.cpu_count()} in total)",
        f"- load average (1, 5, 15 min): {load_before} before the run, {load_average()} after",
        f"- Python {platform.python_version()} ({platform.python_implementation()}); {versions}",
        f"- PYTHONDONTWRITEBYTECODE={os.environ.get('PYTHONDONTWRITEBYTECODE', '(unset)')}",
    ]


def _commit() -> str:
    command = ["git", "rev-parse", "--short", "HEAD"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    return done.stdout.strip() or "unknown"


def render(argv: Sequence[str], plan: Plan, timings: Timings, verdicts: Verdicts | None, load: str) -> str:
    command = " ".join(["python benchmarks/bench.py", *argv])
    lines = ["# Benchmark: time to a trustworthy verdict", "", f"`{command}`"]
    lines += ["", *machine(load), "", "## Wall time and requests", "", *timing_table(plan, timings)]
    if verdicts is not None:
        lines += ["", "## Verdicts: fault catalog and compliant servers (one run each)", ""]
        lines += [*verdict_table(plan, verdicts), "", *missed_faults(plan, verdicts)]
    lines += ["", "## Goals", "", *goal_lines(plan, timings, verdicts), "", *notes(plan)]
    return "\n".join(lines) + "\n"


def notes(plan: Plan) -> list[str]:
    return [
        "Notes: a fresh server per run (empty store), in a thread of the benchmark's process. `st` runs "
        f"`schemathesis run spec/openapi.yaml --checks all --seed {plan.seed}` with its other defaults (1 worker), "
        "in a fresh directory (an empty example database); `st+project` uses `spec/schemathesis.toml` instead "
        "of `--checks all` (every check stays on except the relaxations it documents; `--checks all` would "
        "override them). "
        "In the verdict runs the CLIs stop at their first failure (`--max-failures 1`, same exit code); "
        "the verdicts on the reference and on `slow` (the 20 ms server) are the timed runs' (the worst repeat). "
        "The floor's time is its request loop only, in its own process; the other tools' include their start-up. "
        "`exit` lists the exit codes seen over the runs (0 = the tool passed the server).",
    ]


# -- command line ---------------------------------------------------------------------------------


def parse(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--repeats", type=int, default=3, help="timed runs on the embedded reference (default 3)")
    parser.add_argument(
        "--slow-repeats", type=int, default=1, help="timed runs on the 20 ms server (latency-bound; default 1)"
    )
    parser.add_argument("--quick", action="store_true", help="1 repeat and one fault per clause (about 5 minutes)")
    parser.add_argument("--project-cli", action="store_true", help="also the CLI with spec/schemathesis.toml")
    parser.add_argument("--no-faults", action="store_true", help="skip the fault catalog and compliant servers")
    parser.add_argument("--parallel", type=int, default=2, help="tool runs at a time in the fault phase (default 2)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"the CLI's --seed (default {DEFAULT_SEED})")
    parser.add_argument("--output", type=Path, default=RESULTS, help="Markdown results (default benchmarks/results.md)")
    parser.add_argument("--floor-worker", nargs=2, metavar=("URL", "COUNT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.quick:
        args.repeats = args.slow_repeats = 1
    if not (1 <= args.repeats <= 50 and 1 <= args.slow_repeats <= 50 and 1 <= args.parallel <= 16):
        parser.error("--repeats and --slow-repeats must be 1-50, --parallel 1-16")
    return args


def make_plan(args: argparse.Namespace) -> Plan:
    return Plan(
        tools=("suite", "st", "st+project") if args.project_cli else ("suite", "st"),
        repeats={EMBEDDED: args.repeats, SLOW_SERVER: args.slow_repeats},
        faults=fault_sample(args.quick),
        parallel=args.parallel,
        seed=args.seed,
        verdicts=not args.no_faults,
    )


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse(argv)
    if args.floor_worker:
        url, count = args.floor_worker
        print(f"{floor_loop(url, os.environ[KEY_ENV], int(count)):.6f}")
        return 0
    started, load = time.monotonic(), load_average()
    plan = make_plan(args)
    log(f"phase 1: {plan.tools} and the floor, timed on {plan.repeats}")
    timings = time_tools(plan)
    verdicts = None
    if plan.verdicts:
        log(f"phase 2: {plan.tools} x ({len(plan.faults)} faults + {len(VARIANTS)} compliant servers)")
        verdicts = run_verdicts(plan, reused_verdicts(plan, timings))
    report = render(argv, plan, timings, verdicts, load)
    report += f"\nbenchmark wall time: {time.monotonic() - started:.0f} s\n"
    args.output.write_text(report, encoding="utf-8")
    print(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
