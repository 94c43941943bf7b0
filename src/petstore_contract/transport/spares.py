"""Connections opened ahead of the writes that will need them, so that a write waits for no handshake.

A write goes out on a connection that has carried no request (``connections``).  Opened when the write
is sent, that connection costs the write a TCP handshake, and TLS's on an ``https`` target: nothing on
loopback, a round trip or more at a network's distance, for every write.  So at a distance (answers that
take ``FAR`` or more: farther than a LAN) each write that takes a new connection has another one opened in
the background for the next write (a *spare*); the next write takes it and goes out at once.  A spare
has carried no request, so it cannot have idled out of a keep-alive timeout (RFC 9112 §9.6): it is the
connection the write would have opened, opened earlier.  Near (answers within ``FAR``: loopback, a LAN)
a write opens its own: its round trips are as short as the answers, and the set-up costs it less than
the spares' own CPU (over TLS a handshake for each, and for each closed unused: docs/performance.md).
The distance is read from the answers, not from the set-up: a proxy near the client (a TLS terminator,
a load balancer) accepts at once and connects onward only when the first request comes.  It is the least
of the last ``WINDOW`` answers' times, as TCP reads a path's round trip from its fastest samples: a
round trip is the floor of every answer, and all else that lengthens one (the server's queue in a burst,
a busy client's threads waiting for a core) only adds to it, so a busy client on loopback, whose answers
often take tens of milliseconds, still reads as near whenever one answer came at once.

A spare that waits holds something on the server: a worker of a sync server (gunicorn's sync workers,
Apache httpd's prefork) blocks on it until it sends a request, and the suite's other requests wait for
that worker.  So spares are bounded:

- one for each write that took a connection, none while the run sends none; and two more for each write
  that came while its spare was still opening (``LATE_SPARES``): writes come faster than their spares'
  handshakes (16 writes in flight at 100 ms a round trip start 160 a second; a spare over TLS takes two
  round trips, and a proxy's onward one), one replaces the spare that write took from the next, the other
  is for the write that comes while that one opens, and the spares then run as far ahead of the writes as
  their set-up takes; at most ``MOST`` open or opening per process;
- each closed unused after ``AGE_FACTOR`` set-ups (the running mean of the process's connections' TCP
  and TLS set-up), at least ``AGE_FLOOR`` and at most ``AGE_CAP`` seconds: well below any server's time
  for a connection's first request (Apache's ``mod_reqtimeout`` 20 s, Node's ``headersTimeout`` 60 s,
  Tomcat's ``connectionTimeout`` 20 s), so the server has no reason to close it yet, and a worker it holds
  is freed within that bound.  The floor is for a proxy near the client that accepts at once and opens
  its own connection onward only then (a TLS terminator or load balancer in front of a far service): the
  set-up the client sees is instant, the handshake that counts is paid before the first byte, and a
  spare saves it only once it has lived that long;
- taken oldest first: on a sync server the oldest is the one most likely already accepted by a worker.

A write that finds no spare ready waits for one only where one is opening that no other write waits
for, and at most one set-up (the running mean): begun earlier, that spare is ready no later than the
connection the write would open now (at a distance, over TLS, a burst of writes comes faster than the
handshakes of the spares it started).  Otherwise it opens its connection itself, as before, so a spare
stands between a request and its answer no longer than a handshake, and a server whose workers spares
hold waits at most the age bound.  A spare the server closed is seen before use (``is_connected``: its
socket is readable, at its end) and dropped.  Only writes open spares; a read sent again on a new connection
(``fresh_connection``) takes one if one is there.
"""

from __future__ import annotations

import copy
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

FAR = 0.02  # seconds to an answer (the least of ``WINDOW``) from which spares are opened: a LAN's round trip is 1 ms
WINDOW = 16  # the answers the distance is read from: as many as the run has requests in flight
# Spares open or opening per process: 16 (one per request in flight) left TLS at 100 ms 18 % behind
# kept-alive writes, 48 13 %, 64 8 % (benchmarks/distance.py)
MOST = 64
# Spares opened for each write that came while its spare was still opening: one for the spare it took from the
# next write, one for the write that comes while that one opens (writes keep their pace through a set-up).  One
# alone left a burst's later writes waiting for spares still opening: TLS at 100 ms, median of 4 runs each
# interleaved, 15.6 s with 65-92 writes waiting against 15.2 s with 52-65; three, 114 closed unused in one run
# (benchmarks/distance.py)
LATE_SPARES = 2
# 0.25 s and 1 s left a tenth of the writes at 100 ms without a spare, expired (benchmarks/distance.py)
AGE_FACTOR, AGE_FLOOR, AGE_CAP = 5.0, 1.0, 2.0
WEIGHT = 0.3  # of the newest set-up in the running mean

Key = tuple[type, str, int]


@dataclass(eq=False)
class _Spare:
    connection: Any
    opened: float


@dataclass
class Spares:
    """The spares of one process, by connection class, host and port.  Counted (``benchmarks/spare_counts.py``
    reads them): ``opened``, ``taken`` (by a write, or a read sent again on a new connection), ``expired``
    (closed unused at its age) and ``dropped`` (found closed, or past its age, when a request came for it);
    the rest were closed with the transport."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    ready: dict[Key, list[_Spare]] = field(default_factory=dict)
    setup: dict[Key, float] = field(default_factory=dict)
    answers: dict[Key, deque[float]] = field(default_factory=dict)  # the last ``WINDOW``: sent to the answer's head
    opening: int = 0
    opening_for: dict[Key, int] = field(default_factory=dict)
    claims: dict[Key, int] = field(default_factory=dict)  # writes waiting for a spare of the key that is opening
    late: dict[Key, int] = field(default_factory=dict)  # writes that came while their spare was still opening
    opened: int = 0
    taken: int = 0
    expired: int = 0
    dropped: int = 0
    closed: threading.Event = field(default_factory=threading.Event)
    changed: threading.Condition = field(init=False)  # a spare became ready, or failed to open

    def __post_init__(self) -> None:
        self.changed = threading.Condition(self.lock)

    def note_setup(self, key: Key, seconds: float) -> None:
        """A connection of ``key`` took ``seconds`` to open (TCP, and TLS's handshake where there is one)."""
        with self.lock:
            _mean_in(self.setup, key, seconds)

    def note_answer(self, key: Key, seconds: float) -> None:
        """A request on a connection of ``key`` had its answer's head ``seconds`` after it was sent: no
        shorter than a round trip to the server, so where it is short, so is a new connection's set-up."""
        with self.lock:
            self.answers.setdefault(key, deque(maxlen=WINDOW)).append(seconds)

    def far(self, key: Key) -> bool:
        """Whether ``key``'s server is at a distance: its last answers (under the lock) all took ``FAR`` or
        more; with none yet, it reads as 0 s away."""
        return min(self.answers.get(key, ()), default=0.0) >= FAR

    def age(self, key: Key) -> float:
        return min(AGE_CAP, max(AGE_FLOOR, AGE_FACTOR * self.setup.get(key, 0.0)))

    def take(self, key: Key) -> Any | None:
        """The oldest spare of ``key`` still open at both ends and within its age, or None.  Where none is
        ready but one is opening that no other write waits for, the write waits for it, at most a set-up:
        begun earlier, it is ready no later than a connection the write would open now."""
        claimed = False
        deadline = time.monotonic() + min(AGE_CAP, self.setup.get(key, 0.0))
        try:
            while True:
                with self.changed:
                    while not self.ready.get(key):
                        if not claimed and self.opening_for.get(key, 0) <= self.claims.get(key, 0):
                            return None
                        if not claimed:
                            self.claims[key] = self.claims.get(key, 0) + 1
                            self.late[key] = self.late.get(key, 0) + 1
                            claimed = True
                        left = deadline - time.monotonic()
                        if left <= 0 or self.closed.is_set() or not self.opening_for.get(key, 0):
                            return None
                        self.changed.wait(left)
                    spare = self.ready[key].pop(0)
                if spare.connection.is_connected and time.monotonic() - spare.opened < self.age(key):
                    with self.lock:
                        self.taken += 1
                    return spare.connection
                with self.lock:
                    self.dropped += 1
                spare.connection.close()
        finally:
            if claimed:
                with self.lock:
                    self.claims[key] -= 1

    def replace(self, key: Key, template: Any) -> None:
        """Open a spare like ``template`` (a closed connection, copied at once) in the background, and
        ``LATE_SPARES`` more for each write that came while its spare was still opening, within ``MOST``;
        none near."""
        with self.lock:
            held = self.opening + sum(len(spares) for spares in self.ready.values())
            count = min(1 + LATE_SPARES * self.late.pop(key, 0), MOST - held)
            if self.closed.is_set() or count <= 0 or not self.far(key):
                return
            self.opening += count
            self.opening_for[key] = self.opening_for.get(key, 0) + count
        for _ in range(count):
            spare = detached(template)
            threading.Thread(target=self._open, args=(key, spare), name="spare-connection", daemon=True).start()

    def close(self) -> None:
        """Close every spare; none is opened from now on (the run's transport is closing)."""
        self.closed.set()
        with self.changed:
            spares = [spare for waiting in self.ready.values() for spare in waiting]
            self.ready.clear()
            self.changed.notify_all()
        for spare in spares:
            spare.connection.close()

    def _opened(self, key: Key) -> None:
        """One spare of ``key`` is no longer opening (under the lock); the writes waiting for one look again."""
        self.opening -= 1
        self.opening_for[key] -= 1
        self.changed.notify_all()

    def reopen(self) -> None:
        """Spares may be opened again (a new transport in the same process)."""
        self.closed.clear()

    def _open(self, key: Key, spare: Any) -> None:
        try:
            spare.connect()
        except Exception:  # the write that would have taken it opens its own and meets the failure there
            spare.close()
            with self.changed:
                self._opened(key)
            return
        entry = _Spare(spare, time.monotonic())
        with self.changed:
            self._opened(key)
            kept = not self.closed.is_set()
            if kept:
                self.opened += 1
                self.ready.setdefault(key, []).append(entry)
        if not kept:
            spare.close()
            return
        self.closed.wait(self.age(key))
        with self.lock:
            waiting = self.ready.get(key, [])
            unused = entry in waiting
            if unused:
                waiting.remove(entry)
                self.expired += 1
        if unused:
            spare.close()  # unused within its age: it holds nothing on the server any longer


def _mean_in(means: dict[Key, float], key: Key, seconds: float) -> None:
    """``means[key]`` moved toward ``seconds`` (``WEIGHT`` of the newest), or set by the first."""
    mean = means.get(key)
    means[key] = seconds if mean is None else (1 - WEIGHT) * mean + WEIGHT * seconds


def detached(connection: Any) -> Any:
    """A copy of a closed ``connection`` (the same host, port, TLS settings and timeouts) that shares no
    mutable state with it: http.client builds each request's head in a list it empties in place, so two
    connections sharing that list would send each other's header lines."""
    twin = copy.copy(connection)
    for name, value in vars(twin).items():
        if isinstance(value, list | dict | set | bytearray):
            setattr(twin, name, copy.copy(value))
    return twin


SPARES = Spares()
