"""Independent items run side by side on a bounded pool of threads; results in submission order."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")


def _attempt(fn: Callable[[T], R], item: T) -> tuple[bool, Any]:
    try:
        return True, fn(item)
    except Exception as exc:
        return False, exc


class Batch(Generic[T, R]):
    """Independent items run by ``fn`` on at most ``workers`` threads from the moment they are submitted.

    ``results()`` waits for all of them and answers as ``Transport.map`` does: results in
    submission order, or the first exception (in submission order) with a note counting the
    others.  One worker runs each item at once in the submitting thread.
    """

    def __init__(self, fn: Callable[[T], R], workers: int) -> None:
        self.fn = fn
        self.outcomes: list[Future[tuple[bool, Any]] | tuple[bool, Any]] = []
        self.pool = (
            ThreadPoolExecutor(max_workers=workers, thread_name_prefix="petstore-transport") if workers > 1 else None
        )

    def submit(self, item: T) -> None:
        if self.pool is None:
            self.outcomes.append(_attempt(self.fn, item))
        else:
            self.outcomes.append(self.pool.submit(_attempt, self.fn, item))

    def results(self) -> list[R]:
        outcomes = [o.result() if isinstance(o, Future) else o for o in self.outcomes]
        self.close()
        errors = [value for ok, value in outcomes if not ok]
        if errors:
            first = errors[0]
            if len(errors) > 1:
                first.add_note(f"{len(errors) - 1} more of {len(outcomes)} items failed too")
            raise first
        return [value for _, value in outcomes]

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True)
