"""Which connection a request goes out on: a write never on one that may be closing under it.

A server may close a kept-alive connection at any time (RFC 9112 §9.6): when its keep-alive timeout
ends (gunicorn 2 s; Apache httpd, Node and uvicorn 5 s) or, busy, before it (Apache's event MPM closes
connections in keep-alive state when every worker is busy).  A request sent as the close happens never
reaches the service, and the client cannot tell that from a request the service applied and whose
answer was lost.  A read is sent once more (RFC 9112 §9.3.1: asking again changes nothing); a write must
not be (RFC 9110 §9.2.2), so it must not go out on such a connection in the first place.

So every request that is not idempotent (POST and PATCH: set-up's creates, the targeted and generated
tests' writes, the HTTP layer's PATCH) goes out on a connection that has carried no request before: the
pooled connection it is handed is closed if it was used, and it takes a connection opened ahead of it
(``spares``, at a network's distance) or, when none is there, is opened anew; it goes back to the pool
for later requests.  A new connection cannot have idled out, and a server that takes a connection reads
its first request: a busy one keeps it waiting in its accept queue, it does not close it.  Opened ahead,
the write's connection costs it no handshake (TCP's, and TLS's where the target speaks TLS):
docs/performance.md.  PUT, DELETE and TRACE are idempotent (RFC 9110 §9.2.2) and go out on kept-alive
connections as reads do.  A read that is sent once more after its connection closed goes out on a new
connection too (``fresh_connection``), so that it cannot race a second close.

The connection classes are urllib3's own with ``connect`` and ``request`` extended (their public
methods); the pools that make them are installed in the adapter's pool managers
(``PoolManager.pool_classes_by_scheme``).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from http.client import RemoteDisconnected
from typing import Any, TypeVar

import urllib3
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.exceptions import ProtocolError

from petstore_contract.transport.spares import SPARES, Key

# RFC 9110 §9.2.2: only these may be sent again automatically; a write whose answer was lost is unknown.
IDEMPOTENT = frozenset({"GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"})

# False only in ``benchmarks.distance``'s comparison run (``benchmarks/kept_alive_writes.py``).
WRITES_ON_NEW_CONNECTIONS = True

_wanted = threading.local()  # ``fresh``: the calling thread's next request goes out on a new connection

# New connections of a process start at most one every 4 ms.  A server's accept queue is often small (5 in
# Python's http.server, which hand-written services build on, its accepting thread sharing the GIL with
# every connection's): a burst of new connections (the writes of a table, side by side) overflows it, and
# the kernel resets one of them after its request went out, an unknown write.  Spaced, the queue drains
# as they come; at network distance the spacing costs nothing (16 connections in flight at 100 ms a round
# trip start 160 a second, one every 6 ms).
NEW_CONNECTION_SPACING = 0.004
_starts = threading.Lock()
_last_start = [0.0]


def _space_new_connection() -> None:
    with _starts:
        start = max(time.monotonic(), _last_start[0] + NEW_CONNECTION_SPACING)
        _last_start[0] = start
    delay = start - time.monotonic()
    if delay > 0:
        time.sleep(delay)


@contextlib.contextmanager
def fresh_connection() -> Iterator[None]:
    """Within this block, the calling thread's requests go out on connections that carried none before."""
    before = getattr(_wanted, "fresh", False)
    _wanted.fresh = True
    try:
        yield
    finally:
        _wanted.fresh = before


class _FreshForWrites:
    """Gives a write (or a request inside ``fresh_connection``) a connection that carried no request: a spare
    opened ahead (``spares``) where there is one, else this one closed and, in ``request``, opened anew as
    http.client does for a closed connection."""

    sock: Any
    timeout: Any
    carried = False  # a request went out on the socket as it is now
    sent = 0.0  # when the request going out on it was begun

    def connect(self) -> None:
        _space_new_connection()
        started = time.monotonic()
        super().connect()  # type: ignore[misc]
        SPARES.note_setup(self._key(), time.monotonic() - started)
        self.carried = False

    def request(self, method: str, url: str, body: Any = None, headers: Any = None, **options: Any) -> None:
        write = WRITES_ON_NEW_CONNECTIONS and method.upper() not in IDEMPOTENT
        fresh = write or getattr(_wanted, "fresh", False)
        if fresh and (self.carried or self.sock is None):
            self._take_fresh(write)
        self.sent = time.monotonic()
        super().request(method, url, body=body, headers=headers, **options)  # type: ignore[misc]
        self.carried = True

    def getresponse(self) -> Any:
        response = super().getresponse()  # type: ignore[misc]
        SPARES.note_answer(self._key(), time.monotonic() - self.sent)  # how far the server is (``spares``)
        return response

    def _take_fresh(self, write: bool) -> None:
        if self.sock is not None:
            self.close()  # type: ignore[attr-defined]
        key = self._key()
        spare = SPARES.take(key)
        if write:  # one opened ahead for the next write, as this one takes its connection
            SPARES.replace(key, self)
        if spare is not None:
            timeout = self.timeout  # this request's, set by the pool; the spare's state is otherwise its own
            vars(self).update(vars(spare))
            self.timeout = timeout
            self.sock.settimeout(timeout)

    def _key(self) -> Key:
        return (type(self), str(getattr(self, "host", "")), int(getattr(self, "port", 0) or 0))


class FreshWritesHTTPConnection(_FreshForWrites, HTTPConnection):
    pass


class FreshWritesHTTPSConnection(_FreshForWrites, HTTPSConnection):
    pass


class FreshWritesHTTPPool(urllib3.HTTPConnectionPool):
    ConnectionCls = FreshWritesHTTPConnection


class FreshWritesHTTPSPool(urllib3.HTTPSConnectionPool):
    ConnectionCls = FreshWritesHTTPSConnection


POOLS: dict[str, type[urllib3.HTTPConnectionPool]] = {"http": FreshWritesHTTPPool, "https": FreshWritesHTTPSPool}


Manager = TypeVar("Manager", bound=urllib3.PoolManager)


def install(manager: Manager) -> Manager:
    """``manager`` (a pool manager or a proxy manager) making its pools with these connections."""
    manager.pool_classes_by_scheme = POOLS
    return manager


def dropped_before_answer(exc: BaseException) -> bool:
    """A keep-alive connection that the server closed as the request went out (no answer started)."""
    cause = exc.args[0] if exc.args else None
    return (
        isinstance(cause, ProtocolError)
        and len(cause.args) == 2
        and isinstance(cause.args[1], RemoteDisconnected | ConnectionResetError | BrokenPipeError)
    )


def open_spares(allowed: bool) -> None:
    """Whether connections are opened ahead of writes (``spares``): from a transport's start to its close,
    which closes those that wait."""
    if allowed:
        SPARES.reopen()
    else:
        SPARES.close()
