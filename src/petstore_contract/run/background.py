"""Work started ahead of the test that needs it: one background thread, results by key."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Protocol, TypeVar

T = TypeVar("T")


class Stoppable(Protocol):
    """Work started on other threads than the background's (``Background.started``): stopped at the end."""

    def stop(self) -> None: ...


class Background:
    """``produce()`` callables run one after another in one thread, in the order they were started."""

    def __init__(self) -> None:
        self.futures: dict[str, Future[Any]] = {}
        # Work started on other threads than this one's (e.g. a stateful walk's chains on the run's
        # pool), by key; each has ``stop()``, called when the run ends.
        self.started: dict[str, Stoppable] = {}
        self._starter: ThreadPoolExecutor | None = None

    def start(self, key: str, produce: Callable[[], Any]) -> None:
        """``produce()`` in the background from now on (once per key); ``result_of`` waits for it.

        One thread: what is started ahead runs in the order it was started.  It must not draw
        with Hypothesis (CPython 3.11 cannot run Hypothesis in two threads at once).
        """
        if key in self.futures:
            return
        if self._starter is None:
            self._starter = ThreadPoolExecutor(max_workers=1, thread_name_prefix="petstore-ahead")
        self.futures[key] = self._starter.submit(produce)

    def result_of(self, key: str, produce: Callable[[], T]) -> T:
        """What was started for ``key`` (its exception, if it raised), or ``produce()`` now if nothing was."""
        future = self.futures.get(key)
        result: T = produce() if future is None else future.result()
        return result

    def close(self) -> None:
        for work in self.started.values():
            work.stop()
        self.started.clear()
        if self._starter is not None:
            self._starter.shutdown(wait=True, cancel_futures=True)
