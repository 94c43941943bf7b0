"""Stop signals: SIGTERM and SIGHUP end a contract run as Ctrl-C does (the controller installs them).

CI systems cancel a job, or end one at its time limit, with SIGTERM (GitLab, Jenkins, Kubernetes;
GitHub Actions sends SIGINT, then SIGTERM) and give it 7.5-30 s before SIGKILL; a closed terminal or
SSH session sends SIGHUP.  Python's default for both ends the process at once, with no report.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any

# How CI systems cancel a job or end one at its time limit (GitLab, Jenkins, Kubernetes: SIGTERM;
# a closed terminal or SSH session: SIGHUP).  SIGINT stays pytest's own (KeyboardInterrupt).
STOP_SIGNALS = ("SIGTERM", "SIGHUP")


class StopSignals:
    """SIGTERM and SIGHUP end a contract run as Ctrl-C does: the handler stops every request of the
    run (``on_stop``) and raises KeyboardInterrupt in the main thread, so that pytest ends the session
    as interrupted and the controller judges what it has and writes every report.  The signal's name
    is kept for the verdict's reason.  Installed by the controller only, and restored at its end."""

    def __init__(self, on_stop: Callable[[str], None]) -> None:
        self.on_stop = on_stop
        self.name = ""  # the signal that stopped the run ("" while it runs)
        self.finishing = False  # set once the reports are being written: a later signal must not cut them
        self._previous: dict[int, Any] = {}

    def install(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return  # signal.signal works in the main thread only (a run started from a thread keeps them)
        for name in STOP_SIGNALS:
            number = getattr(signal, name, None)  # Windows has no SIGHUP
            if number is not None:
                self._previous[number] = signal.signal(number, self._handle)

    def restore(self) -> None:
        for number, previous in self._previous.items():
            signal.signal(number, previous)
        self._previous.clear()

    def _handle(self, number: int, frame: FrameType | None) -> None:
        if self.name or self.finishing:
            return  # the run is already ending: its reports are being written and must be whole
        self.name = signal.Signals(number).name
        self.on_stop(self.name)
        raise KeyboardInterrupt(f"stopped by {self.name}")
