"""The run's shared directory: the only files the processes of one run (the controller and its xdist
workers) share, all of them written whole or not at all (``publish``).

- ``<key>.json`` and ``<key>.json.lock``: work done once per run, set-up and the tables sent
  ahead (``Run.once``); the process that takes the lock writes the result, the others wait for it;
- ``counters-<process>.json``: each process's counters and tallies (``RunGuard.write_counters``),
  summed by the controller (``merge_counters``, ``coverage.merge``);
- ``breaker-open``: the circuit breaker, opened by any process and seen by all (``RunGuard``).

The controller removes the directory when the run ends.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path


def publish(path: Path, text: str) -> None:
    """``text`` into ``path`` at once: a reader sees the whole file or none (a temporary file, renamed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}")
    try:
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
    except OSError:
        temporary.unlink(missing_ok=True)
        raise
