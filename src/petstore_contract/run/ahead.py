"""Tables of requests sent ahead: each module's tables, sent in the background once set-up is done.

A test module registers the function that sends a table (``sent_ahead``) under the name of the
module-scoped fixture that answers from it; the fixture asks ``answers``.  Once the selection is
known, the session starts every table a selected test needs, in the order of the tests, one after
another in the background (``start_needed``), so that their round trips overlap the tests before
them; a fixture whose table has not started sends it then.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import pytest

from petstore_contract.run import Run
from petstore_contract.run.setup import Seeded, prepared_of

Sender = Callable[[Run, Seeded], Any]
S = TypeVar("S", bound=Sender)
SENDERS: dict[str, Sender] = {}  # fixture name -> the function that sends its table


def sent_ahead(fixture: str) -> Callable[[S], S]:
    """Registers the decorated function as the table the fixture ``fixture`` answers from."""

    def register(send: S) -> S:
        SENDERS[fixture] = send
        return send

    return register


def answers(run: Run, fixture: str, seeded: Seeded) -> Any:
    """The table's answers: as sent ahead, or sent now."""
    return run.result_of(fixture, lambda: SENDERS[fixture](run, seeded))


def start_needed(run: Run, items: Iterable[pytest.Item]) -> None:
    """Each table a selected test needs, in the order of the tests, in the background after set-up."""
    needed = dict.fromkeys(n for item in items for n in getattr(item, "fixturenames", ()) if n in SENDERS)
    for fixture in needed:
        run.start(fixture, _sender(run, fixture))


def _sender(run: Run, fixture: str) -> Callable[[], Any]:
    return lambda: SENDERS[fixture](run, prepared_of(run).seeded)
