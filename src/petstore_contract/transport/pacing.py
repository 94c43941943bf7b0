"""How many requests one process of the run sends at once, and how fast, when the target throttles.

``Pacer`` is the transport's bound on requests in flight.  It keeps a *limit* between 1 and the
run's ``--contract-concurrency`` and adapts it as TCP's congestion control adapts its window (AIMD):

- a throttled answer (429, or 503 with ``Retry-After``) halves the limit (multiplicative
  decrease), once per wave: an answer to a request sent before the last cut does not cut again,
  so the 429s a gateway gives everything that was in flight cost one halving, not a fall to 1;
- every ``limit`` answers that are not throttled raise it by one (additive increase), up to the
  configured maximum; only answers to requests sent after the last cut count, as only they
  tell how the target takes the new limit.

A limit alone cannot slow a run down on a nearby target (one request at a time is still hundreds
a second), so a throttled answer also paces every sender of the process:

- nobody sends before the ``Retry-After`` is over (one shared "not before" time), not only the
  thread that was answered 429, so the gateway sees a pause instead of more 429s;
- after that, sends are spaced at the rate the target let through over the last ``Retry-After``
  (at least ``MIN_WINDOW``; pauses count, time before the first send does not), and that rate
  grows linearly while no more 429s come (additive again), so a run against a gateway that allows
  N requests a second sends about N.  A later throttled answer lowers the pace to what was let
  through again, but never below half of it (multiplicative decrease: a run that sent little in
  the window has measured its own demand, not the target's limit).  With no answer to measure
  yet (the first requests were all throttled) sends are not spaced: the pause and the limit do
  the work until there is one.

A target that lets nothing through at all (``DRY_WAVES`` waves of 429s in a row with no other
answer between them) gives nothing to pace by, and pausing everyone at each of its 429s would only
make the run one request a ``Retry-After`` long: from then on its 429s change nothing here (each
throttled request still waits out its own ``Retry-After`` in the transport and ends undecided,
throttled), until an answer gets through again.

Per process only: each pytest-xdist worker has its own Pacer.
A gateway that counts all of them together throttles each, and each slows down on its own.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Pacer", "Ticket"]

MIN_WINDOW = 1.0  # seconds: the shortest span a target's allowed rate is measured over
HORIZON = 60.0  # seconds of answers kept for that measure (Retry-After waits are capped below it)
MIN_RATE = 1.0  # requests a second: pacing never goes slower than this
GROWTH = 0.5  # a paced rate grows by this part of itself each second without a throttled answer,
MIN_GROWTH = 1.0  # and by at least this many requests a second each second
DRY_WAVES = 3  # waves of 429s in a row, nothing let through between them: the target lets nothing through


@dataclass(frozen=True)
class Ticket:
    """A slot to send one request.  ``sent`` (monotonic seconds) tells which wave its answer is from."""

    sent: float


class Pacer:
    """The adaptive bound on requests in flight of one process, and the pace of its sends; thread-safe.

    ``acquire`` blocks until a slot under the *current* limit is free and the pause and spacing
    allow a send; every ticket it hands out goes back with exactly one of ``answered``,
    ``throttled`` or ``unanswered``.  ``on_cut`` is called with the limit after each cut (under the
    pacer's lock: it must not call back into the pacer).
    """

    def __init__(
        self,
        maximum: int,
        on_cut: Callable[[int], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.maximum = max(1, maximum)
        self.limit = self.maximum
        self.lowest = self.maximum
        self._on_cut = on_cut
        self._clock = clock
        self._changed = threading.Condition()
        self._in_flight = 0
        self._streak = 0  # answers not throttled since the limit last changed
        self._dry = 0  # cuts since the last answer that was not throttled
        self._last_cut = -math.inf
        self._first_send: float | None = None
        self._not_before = -math.inf  # the shared pause: nobody sends before this
        self._next_send = -math.inf  # the spacing: the next send may go at this time
        self._rate: float | None = None  # requests a second once throttled; None: not paced
        self._rate_since = 0.0
        self._growth = 0.0
        self._answered: deque[float] = deque()  # when answers not throttled came, for the rate
        self._closed = False

    @property
    def in_flight(self) -> int:
        return self._in_flight

    def rate(self) -> float | None:
        """The requests a second sends are spaced at now; None when they are not spaced."""
        with self._changed:
            return self._current_rate(self._clock())

    # sending

    def acquire(self, timeout: float | None = None) -> Ticket | None:
        """A slot to send one request, or None when ``timeout`` seconds passed without one."""
        with self._changed:
            now = self._clock()
            give_up = math.inf if timeout is None else now + max(0.0, timeout)
            while True:
                ready = self._ready_at()
                if self._in_flight < self.limit and ready <= now:
                    return self._take(now)
                if now >= give_up:
                    return None
                # Under the limit, the wait ends with the pause or the spacing; at the limit, when
                # a request in flight is done (``_release`` notifies).
                wake = min(ready if self._in_flight < self.limit else math.inf, give_up)
                self._changed.wait(None if wake == math.inf else wake - now)
                now = self._clock()

    def answered(self, ticket: Ticket) -> None:
        """The request got an answer that is not throttling: a run of ``limit`` of them raises the limit."""
        with self._changed:
            now = self._release()
            self._dry = 0
            self._answered.append(now)
            while self._answered and self._answered[0] < now - HORIZON:
                self._answered.popleft()
            if ticket.sent <= self._last_cut:
                return
            self._streak += 1
            if self._streak >= self.limit and self.limit < self.maximum:
                self.limit += 1
                self._streak = 0

    def throttled(self, ticket: Ticket, pause: float = 0.0) -> None:
        """The request was answered 429 (or 503 with Retry-After): nobody sends for ``pause`` seconds,
        and the first such answer of a wave halves the limit and slows the pace."""
        with self._changed:
            now = self._release()
            if self._dry >= DRY_WAVES:
                return  # nothing gets through at all: see the module's docstring
            cut = ticket.sent > self._last_cut
            if cut:
                self._cut(now, pause)
            if self._dry >= DRY_WAVES:
                self._rate = None  # nothing to pace by
                return
            if pause > 0:
                self._not_before = max(self._not_before, now + pause)
            if cut:
                self._rate_since = max(now, self._not_before)  # the new pace grows from the end of the pause

    def unanswered(self, ticket: Ticket) -> None:
        """The request got no answer (or was not sent): its slot is free, and nothing is learnt."""
        with self._changed:
            self._release()

    def close(self) -> None:
        """The run is over: no more pauses or spacing (the limit still holds)."""
        with self._changed:
            self._closed = True
            self._changed.notify_all()

    # inside the lock

    def _ready_at(self) -> float:
        return -math.inf if self._closed else max(self._not_before, self._next_send)

    def _take(self, now: float) -> Ticket:
        self._in_flight += 1
        if self._first_send is None:
            self._first_send = now
        rate = self._current_rate(now)
        # Spaced from this send, not from when it was due: a late sender does not make a burst.
        self._next_send = now + (1.0 / rate if rate else 0.0)
        return Ticket(now)

    def _release(self) -> float:
        self._in_flight -= 1
        self._changed.notify_all()  # a slot is free, or the pause and the limit just changed
        return self._clock()

    def _current_rate(self, now: float) -> float | None:
        if self._rate is None:
            return None
        return self._rate + self._growth * max(0.0, now - self._rate_since)

    def _cut(self, now: float, pause: float) -> None:
        self._last_cut = now
        self._dry += 1
        self.limit = max(1, self.limit // 2)
        self._streak = 0
        self.lowest = min(self.lowest, self.limit)
        self._rate = self._slower(now, pause)
        self._growth = 0.0 if self._rate is None else max(MIN_GROWTH, GROWTH * self._rate)
        if self._on_cut is not None:
            self._on_cut(self.limit)

    def _slower(self, now: float, pause: float) -> float | None:
        """The pace after a throttled answer: what was let through, but neither faster than the pace
        now nor slower than half of it; None while there is nothing to measure and nothing paced."""
        allowed = self._allowed(now, pause)
        current = self._current_rate(now)
        if current is None:
            return None if allowed is None else max(allowed, MIN_RATE)
        return max(current / 2, min(allowed or 0.0, current), MIN_RATE)

    def _allowed(self, now: float, pause: float) -> float | None:
        """The rate the target let through lately: answers over the last Retry-After (a second at
        least, and not before the first send), None without any answer in that time."""
        first = now if self._first_send is None else self._first_send
        window = min(max(pause, MIN_WINDOW), HORIZON, now - first)
        answers = sum(1 for at in self._answered if at >= now - window)
        return answers / window if answers and window > 0 else None
