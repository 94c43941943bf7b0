"""A pytest plugin for the import-race self-test: records every module first imported off the main thread.

Loaded into a suite run with ``-p threaded_imports`` (this folder on PYTHONPATH); writes one module
name per line, with the thread that imported it, to the file named by ``THREADED_IMPORTS_OUT``.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from typing import Any

FOUND: dict[str, str] = {}


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if event != "import" or threading.current_thread() is threading.main_thread():
        return
    name = args[0]
    if isinstance(name, str) and name not in sys.modules:
        FOUND.setdefault(name, threading.current_thread().name)


sys.addaudithook(_hook)


def pytest_unconfigure() -> None:
    out = os.environ.get("THREADED_IMPORTS_OUT")
    if out:
        Path(out).write_text("".join(f"{name} {thread}\n" for name, thread in sorted(FOUND.items())), encoding="utf-8")
