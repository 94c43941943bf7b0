"""Connections opened ahead of the writes that will need them, so that a write waits for no handshake.

A write goes out on a connection that has carried no request (``connections``).  Opened when the write
is sent, that connection costs the write a TCP handshake, and TLS's on an ``https`` target: nothing on
loopback, a round trip or more at a network's distance, for every write.  So each write that takes a
new connection has another one opened in the background for the next write (a *spare*); the next write
takes it and goes out at once.  A spare has carried no request, so it cannot have idled out of a
keep-alive timeout (RFC 9112 §9.6): it is the connection the write would have opened, opened earlier.

A spare that waits holds something on the server: a worker of a sync server (gunicorn's sync workers,
Apache httpd's prefork) blocks on it until it sends a request, and the suite's other requests wait for
that worker.  So spares are bounded:

- at most ``MOST`` open or opening per process, one for each write that took a connection: as many as
  the writes the run sends at once, none while it sends none;
- each closed unused after ``AGE_FACTOR`` set-ups (the running mean of the process's connections' TCP
  and TLS set-up), at least ``AGE_FLOOR`` and at most ``AGE_CAP`` seconds: well below any server's time
  for a connection's first request (Apache's ``mod_reqtimeout`` 20 s, Node's ``headersTimeout`` 60 s),
  so the server has no reason to close it yet, and a worker it holds is freed within that bound;
- taken oldest first: on a sync server the oldest is the one most likely already accepted by a worker.

No request ever waits for a spare: a write that finds none opens its connection itself, as before, so
a spare never stands between a request and its answer, and a server whose workers spares hold waits at
most the age bound.  A spare the server closed is seen before use (``is_connected``: its socket is
readable, at its end) and dropped.  Only writes open spares; a read sent again on a new connection
(``fresh_connection``) takes one if one is there.
"""

from __future__ import annotations

import copy
import threading
import time
from dataclasses import dataclass, field
from typing import Any

MOST = 16  # spares open or opening per process (the default requests in flight)
AGE_FACTOR, AGE_FLOOR, AGE_CAP = 5.0, 0.25, 1.0
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
    opening: int = 0
    opened: int = 0
    taken: int = 0
    expired: int = 0
    dropped: int = 0
    closed: threading.Event = field(default_factory=threading.Event)

    def note_setup(self, key: Key, seconds: float) -> None:
        """A connection of ``key`` took ``seconds`` to open (TCP, and TLS's handshake where there is one)."""
        with self.lock:
            mean = self.setup.get(key)
            self.setup[key] = seconds if mean is None else (1 - WEIGHT) * mean + WEIGHT * seconds

    def age(self, key: Key) -> float:
        return min(AGE_CAP, max(AGE_FLOOR, AGE_FACTOR * self.setup.get(key, 0.0)))

    def take(self, key: Key) -> Any | None:
        """The oldest spare of ``key`` still open at both ends and within its age, or None."""
        while True:
            with self.lock:
                waiting = self.ready.get(key)
                if not waiting:
                    return None
                spare = waiting.pop(0)
            if spare.connection.is_connected and time.monotonic() - spare.opened < self.age(key):
                with self.lock:
                    self.taken += 1
                return spare.connection
            with self.lock:
                self.dropped += 1
            spare.connection.close()

    def replace(self, key: Key, template: Any) -> None:
        """Open a spare like ``template`` (a closed connection, copied at once) in the background, within ``MOST``."""
        with self.lock:
            held = self.opening + sum(len(spares) for spares in self.ready.values())
            if self.closed.is_set() or held >= MOST:
                return
            self.opening += 1
        spare = detached(template)
        threading.Thread(target=self._open, args=(key, spare), name="spare-connection", daemon=True).start()

    def close(self) -> None:
        """Close every spare; none is opened from now on (the run's transport is closing)."""
        self.closed.set()
        with self.lock:
            spares = [spare for waiting in self.ready.values() for spare in waiting]
            self.ready.clear()
        for spare in spares:
            spare.connection.close()

    def reopen(self) -> None:
        """Spares may be opened again (a new transport in the same process)."""
        self.closed.clear()

    def _open(self, key: Key, spare: Any) -> None:
        try:
            spare.connect()
        except Exception:  # the write that would have taken it opens its own and meets the failure there
            spare.close()
            return
        finally:
            with self.lock:
                self.opening -= 1
        entry = _Spare(spare, time.monotonic())
        with self.lock:
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
