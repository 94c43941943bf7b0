"""A pytest plugin for the process self-test: records every process the run starts.

Loaded into a suite run with ``-p started_processes`` (this folder on PYTHONPATH).  An audit hook
sees each ``subprocess.Popen``, fork, spawn and exec of the process (``multiprocessing`` starts its
processes through them too); each is written, one a line, with the suite's own module that asked for
it (the innermost frame inside ``petstore_contract``, or "-" when none did: e.g. pytest-metadata's
``platform.processor()``, which runs ``uname -p``), to the file named by ``STARTED_PROCESSES_OUT``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

EVENTS = ("subprocess.Popen", "os.fork", "os.forkpty", "os.posix_spawn", "os.spawn", "os.exec", "os.system")
SEEN: list[str] = []


def _asked_by() -> str:
    frame = sys._getframe(2)
    while frame is not None:
        name = frame.f_globals.get("__name__", "")
        if isinstance(name, str) and name.startswith("petstore_contract"):
            return name
        frame = frame.f_back
    return "-"


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if event in EVENTS:
        SEEN.append(f"{event} {_asked_by()}")


sys.addaudithook(_hook)


def pytest_unconfigure() -> None:
    out = os.environ.get("STARTED_PROCESSES_OUT")
    if out:
        Path(out).write_text("".join(line + "\n" for line in SEEN), encoding="utf-8")
