"""Suite runs in this process's suite hosts (``devtools/suitehost.py``), for the self-tests whose point is
a run's verdict, reports or traffic, not its process.

A suite run in a fresh interpreter spends about 3 of its 7-8 s of CPU starting up (imports, plugin
load); tier 1 runs about fifty such runs besides the catalogs.  ``run_hosted`` takes the same
arguments as ``launcher.run_suite`` and gives the same ``SuiteRun`` (the same pytest command line, the
key in the run's environment alone, reports read back), minus the start-up.

What a host cannot show stays with ``launcher.run_suite``: the command line as a shell gives it, an exit
code a shell sees, signals, what an interpreter reads once at start-up (PYTHONPATH, TMPDIR: the host
refuses them), the imports of a fresh process, the processes a run starts, and a working directory of
the test's own.  The self-tests' plugins (``selftests/plugins``) are on every host's path, so ``-p NAME``
loads one as it does in a run of its own.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from devtools.launcher import SuiteRun
from devtools.suitehost import SuiteHosts

_lock = threading.Lock()
_hosts: SuiteHosts | None = None
S = TypeVar("S", bound=Hashable)


def run_hosted(base_url: str | None, api_key: str | None, *args: str, **options: Any) -> SuiteRun:
    """``launcher.run_suite``'s run (``options``: ``timeout``, ``env``, ``keep``), in one of this process's
    hosts (``SuiteHosts.run``: one host per run side by side)."""
    global _hosts
    with _lock:
        if _hosts is None:
            _hosts = SuiteHosts()
        hosts = _hosts
    return hosts.run(base_url, api_key, *args, **options)


def close() -> None:
    """End this process's hosts (the self-tests' session end)."""
    global _hosts
    with _lock:
        if _hosts is not None:
            _hosts.close()
            _hosts = None


def side_by_side(todo: list[S], run: Callable[[S], SuiteRun], parallel: int) -> dict[S, SuiteRun]:
    """Each scenario's ``run`` (one that calls ``run_hosted``), ``parallel`` at a time: the catalogs' chunks
    share this process's hosts, which start once a process (about 3 s of CPU a host), not once a chunk."""
    with ThreadPoolExecutor(max_workers=parallel) as pool:
        return dict(zip(todo, pool.map(run, todo), strict=True))
