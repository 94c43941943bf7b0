"""Work sent ahead of the tests that need it, once the selection is known.

- Tables of requests: a test module registers the function that sends a table (``sent_ahead``)
  under the name of the module-scoped fixture that answers from it; the fixture asks ``answers``.
  The session starts every table a selected test needs, in the order of the tests, one after
  another in the background thread (``start_needed``), so that their round trips overlap the tests
  before them; a fixture whose table has not started sends it then.
- Work that has to be prepared in the main thread (the stateful walks: Hypothesis draws only there)
  and is then sent on the run's pool: a test module registers a starter (``started_ahead``) under
  the name of the fixture that waits for it; the session calls it for each selected test that uses
  the fixture, and the starter keeps what it started on the run (``Run.started``).  Not at
  ``--contract-concurrency 1`` (one request at a time, in the order of the tests) and not in an
  xdist worker (which does not know yet which tests it will run).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import pytest

from petstore_contract.run import Run
from petstore_contract.run.setup import set_up_of
from petstore_contract.run.setup_records import Seeded

Sender = Callable[[Run, Seeded], Any]
S = TypeVar("S", bound=Sender)
SENDERS: dict[str, Sender] = {}  # fixture name -> the function that sends its table
Starter = Callable[[Run, pytest.Item], None]
STARTERS: dict[str, Starter] = {}  # fixture name -> what starts, in the main thread, the work a test waits for


def sent_ahead(fixture: str) -> Callable[[S], S]:
    """Registers the decorated function as the table the fixture ``fixture`` answers from."""

    def register(send: S) -> S:
        SENDERS[fixture] = send
        return send

    return register


def started_ahead(fixture: str) -> Callable[[Starter], Starter]:
    """Registers the decorated function as the starter of the work the fixture ``fixture`` waits for."""

    def register(start: Starter) -> Starter:
        STARTERS[fixture] = start
        return start

    return register


def answers(run: Run, fixture: str, seeded: Seeded) -> Any:
    """The table's answers: as sent ahead, or sent now."""
    return run.result_of(fixture, lambda: SENDERS[fixture](run, seeded))


def start_needed(run: Run, items: Iterable[pytest.Item], starters: bool = True) -> None:
    """Each table a selected test needs, in the order of the tests, in the background after set-up;
    then (``starters``) the work each selected test waits for, started in this thread."""
    items = list(items)
    needed = dict.fromkeys(n for item in items for n in getattr(item, "fixturenames", ()) if n in SENDERS)
    for fixture in needed:
        run.start(fixture, _sender(run, fixture))
    for item in items if starters else ():
        for name in getattr(item, "fixturenames", ()):
            if name in STARTERS:
                try:
                    STARTERS[name](run, item)
                except Exception:
                    # (a spec that does not load is the generated tests' error, never the session's)
                    continue


def waits_for_started(item: pytest.Item) -> bool:
    """The test waits for work started ahead on the run's pool (so it is best run last)."""
    return any(name in STARTERS for name in getattr(item, "fixturenames", ()))


def _sender(run: Run, fixture: str) -> Callable[[], Any]:
    return lambda: SENDERS[fixture](run, set_up_of(run).seeded)
