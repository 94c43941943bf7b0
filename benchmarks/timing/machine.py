"""What the machine is doing: CPU time, cores, load, and which suite version is measured."""

from __future__ import annotations

import hashlib
import os
import resource
import subprocess
from pathlib import Path

from benchmarks.timing.common import ROOT


def machine_cpu_seconds() -> float:
    """Busy CPU time of the whole machine, all cores (Linux /proc/stat; 0 elsewhere)."""
    try:
        fields = Path("/proc/stat").read_text(encoding="ascii").splitlines()[0].split()[1:]
    except OSError:
        return 0.0
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(x) for x in fields[:8])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def own_cpu_seconds() -> float:
    """This process and every finished (waited-for) descendant: suites, their xdist workers, CLIs, replays."""
    mine, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return mine.ru_utime + mine.ru_stime + children.ru_utime + children.ru_stime


def children_cpu_seconds() -> float:
    """Every finished (waited-for) descendant of this process: a run's process and its children (xdist
    workers, the embedded reference), not the reference thread of this process a row may serve."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return children.ru_utime + children.ru_stime


def cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def load_average() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a"


def tree_fingerprint() -> str:
    """The suite under measurement: HEAD and the uncommitted changes to src/ and tests/ (others edit them)."""
    digest = hashlib.sha1(git("rev-parse", "HEAD").encode(), usedforsecurity=False)
    digest.update(git("diff", "HEAD", "--", "src", "tests").encode())
    return digest.hexdigest()[:10]


def git(*args: str) -> str:
    done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=False)
    return done.stdout.strip()
