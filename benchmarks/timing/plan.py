"""The plan of a benchmark: which rows, how often, each run guarded against a busy machine."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from benchmarks.timing.common import log
from benchmarks.timing.machine import (
    children_cpu_seconds,
    cores,
    load_average,
    machine_cpu_seconds,
    own_cpu_seconds,
    tree_fingerprint,
)
from benchmarks.timing.recording import with_latency
from benchmarks.timing.rows import Measurement, run_floor_row, run_schemathesis_row, run_suite_row
from devtools.catalog import VARIANTS
from petstore_contract.run import DEFAULT_CONCURRENCY


@dataclass(frozen=True)
class Plan:
    latencies: tuple[float, ...]
    repeats: int  # target rows: embedded, default concurrency, floor
    side_repeats: int  # serial, schemathesis, -n 2, throttling
    st_workers: tuple[str, ...]
    serial_latencies: tuple[float, ...]
    profile: str
    seed: int
    smoke: bool = False


DEFAULT, XDIST = str(DEFAULT_CONCURRENCY), f"{DEFAULT_CONCURRENCY} x 2 workers"


@dataclass
class Guard:
    """Before each run, wait until other processes leave the CPUs alone; after it, say how much they took."""

    wait: bool
    max_wait: float = 3600.0
    threshold: float = 0.10  # others' share of the machine that still counts as quiet
    disturbed: float = 0.25  # others' share during a run that makes it worth repeating
    retries: int = 3

    def others_share(self, seconds: float) -> float:
        machine, own, started = machine_cpu_seconds(), own_cpu_seconds(), time.monotonic()
        time.sleep(seconds)  # sampling the machine's idleness between runs, not simulating work
        elapsed = time.monotonic() - started
        return max(0.0, machine_cpu_seconds() - machine - (own_cpu_seconds() - own)) / (elapsed * cores())

    def until_quiet(self) -> None:
        if not self.wait:
            return
        started = time.monotonic()
        said = -60.0
        while (share := self.others_share(3.0)) > self.threshold and time.monotonic() < started + self.max_wait:
            if time.monotonic() - said >= 60:
                log(f"other processes use {share:.0%} of the CPUs (load {load_average()}): waiting")
                said = time.monotonic()
        if time.monotonic() - started > 5:
            log(f"waited {time.monotonic() - started:.0f} s for quiet CPUs (others now {share:.0%})")

    def run(self, measure: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """``measure(*args)``; again (up to ``retries`` times) when others took over ``disturbed`` of the CPUs."""
        for attempt in range(1 + (self.retries if self.wait else 0)):
            self.until_quiet()
            load, tree = os.getloadavg()[0], tree_fingerprint()
            machine, own, started = machine_cpu_seconds(), own_cpu_seconds(), time.monotonic()
            children = children_cpu_seconds()
            result = measure(*args, **kwargs)
            elapsed = time.monotonic() - started
            cpu = children_cpu_seconds() - children
            others = max(0.0, machine_cpu_seconds() - machine - (own_cpu_seconds() - own)) / (elapsed * cores())
            row = result[0] if isinstance(result, tuple) else result
            row.others_cpu, row.load, row.tree, row.cpu = others, load, tree, cpu
            if others > 0.05:
                log(f"  other processes used {others:.0%} of the CPUs during that run")
            if others <= self.disturbed:
                break
            if attempt < self.retries and self.wait:
                log("  disturbed: measuring it again")
        return result


def measure_all(plan: Plan, guard: Guard) -> list[Measurement]:
    rows: list[Measurement] = []
    if plan.smoke:
        quick = ["--contract-profile", "quick"]
        row, recording = guard.run(run_suite_row, "suite (quick profile)", 0, with_latency(0), quick, DEFAULT, True)
        floor = run_floor_row(0, recording, DEFAULT_CONCURRENCY)
        row.notes = "; ".join(filter(None, [row.notes, f"its floor replay: {floor.seconds:.2f} s ({floor.notes})"]))
        return [row]
    gate = ["--contract-profile", plan.profile, "--contract-concurrency", DEFAULT]
    serial = ["--contract-profile", plan.profile, "--contract-concurrency", "1"]
    for _ in range(plan.repeats):
        rows.append(guard.run(run_suite_row, "suite (embedded reference)", 0, None, gate, DEFAULT)[0])
    for latency in plan.latencies:
        server = with_latency(latency)
        for _ in range(plan.repeats):
            row, recording = guard.run(run_suite_row, "suite", latency, server, gate, DEFAULT, True)
            rows.append(row)
            for strict in (False, True):
                rows.append(guard.run(run_floor_row, latency, recording, DEFAULT_CONCURRENCY, strict))
        for _ in range(plan.side_repeats if latency in plan.serial_latencies else 0):
            rows.append(guard.run(run_suite_row, "suite", latency, server, serial, "1", True)[0])
        if latency == 0:  # right after the 0 ms serial and default runs: writes compared on one suite version
            rows += side_rows(plan, guard, gate)
        for workers in plan.st_workers:
            for _ in range(plan.side_repeats):
                rows.append(guard.run(run_schemathesis_row, latency, workers, plan.seed))
    if 0 not in plan.latencies:
        rows += side_rows(plan, guard, gate)
    return rows


def side_rows(plan: Plan, guard: Guard, gate: list[str]) -> list[Measurement]:
    """-n 2 (writes) and the throttling server, both at 0 ms."""
    rows = []
    xdist = [*gate, "-n", "2"]
    for _ in range(plan.side_repeats):
        rows.append(guard.run(run_suite_row, "suite -n 2 (xdist)", 0, with_latency(0), xdist, XDIST)[0])
    throttling = VARIANTS["throttling"]
    for _ in range(plan.side_repeats):
        rows.append(guard.run(run_suite_row, "suite vs throttling server", 0, throttling, gate, DEFAULT)[0])
    return rows
