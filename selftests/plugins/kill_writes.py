"""A pytest plugin for the atomic-write self-test: SIGKILLs the run at a chosen point of its report writing.

Loaded into a suite run with ``-p kill_writes`` (this folder on PYTHONPATH).  It wraps ``os.write``
and ``os.replace`` for the files of one folder (``KILL_WRITES_DIR``, the run's report folder):

- ``KILL_WRITES_AT=byte:N``: the process kills itself (SIGKILL) once N bytes were written into that
  folder's files, part of a write included;
- ``KILL_WRITES_AT=before:N`` / ``after:N``: just before, or just after, the N-th rename into it;
- ``KILL_WRITES_COUNT=FILE``: nothing is killed; the bytes written and renames made there go to FILE
  as JSON when the run ends, so that the self-test knows where its kill points lie.

The product knows nothing of it: the kill comes from outside the code under test, as a CI system's would.
"""

from __future__ import annotations

import atexit
import json
import os
import signal
from pathlib import Path
from typing import Any

FOLDER = Path(os.environ.get("KILL_WRITES_DIR", "/nonexistent")).resolve()
WHAT, _, NUMBER = os.environ.get("KILL_WRITES_AT", "none:0").partition(":")
AT = int(NUMBER or 0)
SEEN = {"bytes": 0, "renames": 0}
_write, _replace = os.write, os.replace


def _ours(path: str) -> bool:
    return Path(path).resolve().parent == FOLDER


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _written(fd: int, data: Any) -> int:
    try:
        ours = _ours(os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:
        ours = False
    if not ours:
        return _write(fd, data)
    if WHAT == "byte" and SEEN["bytes"] + len(data) >= AT:
        _write(fd, bytes(data)[: AT - SEEN["bytes"]])
        _die()
    count = _write(fd, data)
    SEEN["bytes"] += count
    return count


def _renamed(source: Any, target: Any, *args: Any, **kwargs: Any) -> None:
    if not _ours(os.fspath(target)):
        _replace(source, target, *args, **kwargs)
        return
    SEEN["renames"] += 1
    if WHAT == "before" and SEEN["renames"] == AT:
        _die()
    _replace(source, target, *args, **kwargs)
    if WHAT == "after" and SEEN["renames"] == AT:
        _die()


def _count() -> None:
    out = os.environ.get("KILL_WRITES_COUNT")
    if out:
        Path(out).write_text(json.dumps(SEEN), encoding="utf-8")


os.write = _written
os.replace = _renamed  # type: ignore[assignment]
atexit.register(_count)
