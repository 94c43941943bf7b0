"""A busy target slows the run down; it never ends it undecided.

A small deployment (a few workers behind Apache httpd or gunicorn, a slow application) shows it is busy
in other ways than a 429: it refuses connections (its accept queue is full, or a worker is restarting),
it closes connections without answering (Apache's event MPM closes kept-alive connections when every
worker is busy), or its answers slow down sharply (requests queue behind its few workers).  None of
these is an answer to judge, and none says the target is gone: it answered before.  They are answered as
a 429 is (``pacing``): fewer requests in flight, every sender of the process pausing, and the request
sent again after the pause when that is safe:

- a refused connection: nothing was sent, so any request may go again (RFC 9110 §9.2.2 forbids only
  sending a write twice);
- a connection closed before any byte of an answer, to a read that was already sent once more on a new
  connection (RFC 9112 §9.3.1): sent again after the pause;
- a write whose new connection closed before its answer: never sent again (it may have been applied),
  but the run still slows down;
- an answer slower than half the request timeout: the run slows down (``stalled_answers``).

At most ``RESENDS`` times per request, each pause twice the one before, none past the run budget.  A
target that refused or dropped every request from the first one is not busy but unreachable: the
circuit breaker's business (``guard``).
"""

from __future__ import annotations

import requests

from petstore_contract.transport.problems import reason

RESENDS = 4
FIRST_PAUSE = 0.25  # seconds: 0.25, 0.5, 1, 2 -- under 4 s in all before a request is given up


class Busy(Exception):
    """A sign of a busy target for one request: ``line`` says what happened, ``sent`` when it went out
    (epoch and monotonic seconds), ``resend`` whether it may go again."""

    def __init__(self, line: str, sent: tuple[float, float], *, resend: bool) -> None:
        super().__init__(line)
        self.line = line
        self.sent = sent
        self.resend = resend


def pause(resends: int) -> float:
    """The pause before the next resend of a request sent again ``resends`` times already."""
    return FIRST_PAUSE * float(1 << resends)


def refused(exc: BaseException) -> bool:
    """The connection was refused: the request was never sent."""
    return isinstance(exc, requests.exceptions.ConnectionError) and reason(exc) == "connection refused"
