"""Time to a verdict at real network distance: the contract suite, Schemathesis' CLI and the floor.

    python benchmarks/bench.py                  # every scenario; target rows median of 3; writes results.md
    python benchmarks/bench.py --quick          # every target row once, fewer side rows; a few minutes
    python benchmarks/bench.py --smoke          # one row in seconds (quick profile, 0 ms); prints, writes --out only
    python benchmarks/bench.py --distance-only --repeats 2   # the gate at 0/100 ms, plain/TLS, CPU by phase
    python benchmarks/bench.py --help

Every row meets a fresh reference server (a uvicorn thread of this process on 127.0.0.1, a fresh
random key, an empty store) that answers each request ``--latencies`` ms late (the server's
``latency_seconds``: the distance is the server's, on purpose; nothing here sleeps). Requests and
writes (requests other than GET/HEAD/OPTIONS) are counted at that server.

- ``suite``: ``pytest tests --base-url URL --contract-profile default --contract-concurrency N`` through
  ``devtools.run_suite`` (key in PETSTORE_API_KEY), serially (N = 1) and at the default (16);
  ``suite -n 2`` adds pytest-xdist. ``suite (embedded)`` gives no ``--base-url``: the suite starts its
  own reference. The wall time is the whole process: start-up, collection, requests, reports.
- ``schemathesis``: ``schemathesis --config-file spec/schemathesis.toml run spec/openapi.yaml --url URL
  --workers W --seed S -H "Authorization: Bearer KEY"`` in an empty directory, for each ``--st-workers``.
- ``floor``: the very requests the suite sent in the same repeat's default-concurrency run (recorded
  at the server by an ASGI middleware: method, raw path, query, headers, body, status, arrival and end
  time), replayed against a fresh server of the same latency by a bare scheduler over keep-alive
  ``requests.Session`` connections, one per thread of a pool as large as the suite's concurrency (16),
  in another process. Its time is the replay's, first send to last answer (no start-up).

Dependency model of the floor replay.  Request B waits for an earlier request A only when
(1) A had answered before B arrived in the suite's own run (the suite did not need the order of
requests it had in flight together), and (2) A created an animal (a 2xx POST /pets) and B lists the
animals (GET /pets) or reads that animal (GET /pets/{its id}): POSTs before the reads that follow
them.  Rejected writes change nothing and wait for nothing; creates wait for nothing; every other pair
commutes.  Ready requests start in recorded order as soon as a connection is free; ids in paths are
mapped to the ids the replay server handed out.  ``floor, lists keep their order`` adds: a create waits
for the lists, and the reads of the id it hands out, that answered before it arrived (so every answer
is one the suite could have seen: the suite's own ordering constraints, not only the data's).

``--distance-only`` runs ``benchmarks/distance.py`` alone: the default gate behind a relay that adds a round
trip (0 and 100 ms; plain, and TLS through nginx), beside the same runs with writes on kept-alive connections and
with no connection opened ahead of a write, each run's process CPU by phase (``benchmarks/phases.py``) and the
connections it opened ahead and used (``benchmarks/spare_counts.py``), with the load average before and
after (it does not wait for quiet).

Each run waits until other processes use < 10 % of the CPUs (``--no-wait``: not), and the report
gives their share during every run (from /proc/stat minus this process tree's rusage).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from petstore_contract.run.profiles import DEFAULT_SEED

# The benchmark's parts and the launcher are the checkout's (benchmarks/, devtools/: not installed).
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks import distance
from benchmarks.timing.common import RESULTS, log
from benchmarks.timing.floor import floor_loop, replay_worker
from benchmarks.timing.machine import git, load_average
from benchmarks.timing.plan import Guard, Plan, measure_all
from benchmarks.timing.report import render

__all__ = ["floor_loop", "main"]  # floor_loop: the smoke self-test checks a server with it


# -- command line ---------------------------------------------------------------------------------


def numbers(text: str) -> tuple[float, ...]:
    return tuple(float(x) for x in text.split(",") if x.strip())


@dataclass(frozen=True)
class Option:
    """One command-line option: a switch (``store_true``) when it has no ``type``."""

    flags: tuple[str, ...]
    help: str
    type: Callable[[str], object] | None = None
    default: object = None
    metavar: str | None = None
    dest: str | None = None

    def add(self, add_argument: Callable[..., argparse.Action]) -> None:
        """Added by ``add_argument``: a parser's, or a group's of it."""
        if self.type is None:
            add_argument(*self.flags, action="store_true", help=self.help)
        else:
            add_argument(
                *self.flags, type=self.type, default=self.default, metavar=self.metavar, dest=self.dest, help=self.help
            )


MODES = (  # one of them at most
    Option(("--quick",), "target rows once, Schemathesis at --workers 8 only, serial only at 0 ms (a few minutes)"),
    Option(
        ("--smoke",),
        "one row in a few seconds: the suite (quick profile) at 0 ms and a replay of its requests; "
        "writes a report only with --out",
    ),
    Option(
        ("--distance-only",),
        "only benchmarks/distance.py: the default gate at 0 and 100 ms, plain and TLS, beside kept-alive writes "
        "and no spares, each run's CPU by phase (--repeats runs a row; writes a report only with --out)",
    ),
)
OPTIONS = (
    Option(("--repeats",), "runs of each target row (default 3)", int, 3),
    Option(("--side-repeats",), "runs of each side row: serial, Schemathesis, -n 2, throttling (default 1)", int, 1),
    Option(("--latencies",), "server latencies in ms (default 0,20,100)", numbers, (0.0, 20.0, 100.0), "MS,MS"),
    Option(
        ("--serial-latencies",),
        "latencies with a serial (--contract-concurrency 1) row (default: all)",
        numbers,
        None,
        "MS,MS",
    ),
    Option(
        ("--st-workers",), "Schemathesis --workers values (default 1,auto,4,8; empty: none)", str, "1,auto,4,8", "W,W"
    ),
    Option(("--seed",), f"Schemathesis' --seed (default {DEFAULT_SEED})", int, DEFAULT_SEED),
    Option(("--out", "--output"), "Markdown report (default benchmarks/results.md; --smoke: none)", Path, dest="out"),
    Option(
        ("--wait-for-load",),
        "first wait (up to 30 min) until the 1-minute load average is below LOAD",
        float,
        None,
        "LOAD",
    ),
    Option(
        ("--no-wait",),
        "start each run at once (default: wait until other processes use < 10%% of the CPUs; --smoke never waits)",
    ),
    Option(("--max-wait",), "longest wait for quiet before a run (default 3600)", float, 3600.0, "S"),
    Option(("--distance",), "also benchmarks/distance.py (0, 100 ms; plain, TLS)"),
)


def parse(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group()
    for option in MODES:
        option.add(mode.add_argument)
    for option in OPTIONS:
        option.add(parser.add_argument)
    parser.add_argument("--replay-worker", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.quick:
        args.repeats, args.side_repeats, args.st_workers = 1, 1, "8"
        args.serial_latencies = args.serial_latencies or (0.0,)
    if not (1 <= args.repeats <= 20 and 1 <= args.side_repeats <= 20):
        parser.error("--repeats and --side-repeats must be 1-20")
    if args.out is None and not (args.smoke or args.distance_only):
        args.out = RESULTS
    return args


def make_plan(args: argparse.Namespace) -> Plan:
    return Plan(
        latencies=args.latencies,
        repeats=args.repeats,
        side_repeats=args.side_repeats,
        st_workers=tuple(w.strip() for w in args.st_workers.split(",") if w.strip()),
        serial_latencies=args.latencies if args.serial_latencies is None else args.serial_latencies,
        profile="default",
        seed=args.seed,
        smoke=args.smoke,
    )


def wait_for_load(limit: float, timeout: float = 1800.0, sleep: Callable[[float], None] = time.sleep) -> None:
    deadline = time.monotonic() + timeout
    while os.getloadavg()[0] >= limit and time.monotonic() < deadline:
        log(f"load {load_average()}: waiting for < {limit:g}")
        sleep(30)


def at_distance(argv: Sequence[str], args: argparse.Namespace, started: float, load: str) -> int:
    """``--distance-only``: the distance table and the default rows' CPU by phase, with the load before and after."""
    commit, day = git("rev-parse", "--short", "HEAD"), f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC"
    report = (
        f"# The gate at a round trip's distance\n\n`python benchmarks/bench.py {' '.join(argv)}` at {commit}, {day}; "
        f"load average (1, 5, 15 min) before: {load}\n\n"
        + distance.main(["--repeats", str(args.repeats)])
        + f"\n\nload average after: {load_average()}; benchmark wall time: {time.monotonic() - started:.0f} s\n"
    )
    if args.out:
        args.out.write_text(report, encoding="utf-8")
    print(report)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse(argv)
    if args.replay_worker:
        return replay_worker(args.replay_worker)
    if args.wait_for_load is not None:
        wait_for_load(args.wait_for_load)
    started, load = time.monotonic(), load_average()
    if args.distance_only:
        return at_distance(argv, args, started, load)
    plan = make_plan(args)
    measurements = measure_all(plan, Guard(wait=not (args.smoke or args.no_wait), max_wait=args.max_wait))
    report = render(argv, plan, measurements, load)
    if args.distance:  # through a relay (and nginx for TLS): what each write's connection costs
        report += "\n## The gate at a round trip's distance (benchmarks/distance.py)\n\n" + distance.main([]) + "\n"
    report += f"\nbenchmark wall time: {time.monotonic() - started:.0f} s\n"
    if args.out:
        args.out.write_text(report, encoding="utf-8")
    print(report)
    crashed = [m for m in measurements if m.scenario.startswith("suite") and not m.summary]
    return 1 if crashed else 0


if __name__ == "__main__":
    sys.exit(main())
