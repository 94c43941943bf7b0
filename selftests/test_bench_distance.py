"""The gate at a round trip's distance (``python benchmarks/bench.py --distance-only``).

``benchmarks/rtt_proxy.py``'s relay (the round trip ``benchmarks.distance`` puts before a target) relays bytes
both ways, and when its block ends it stops: it listens no more, the connections it relayed are closed at both
ends, and its thread ends.  ``benchmarks.distance``'s table sets each row beside its kept-alive row, with the
spares a run opened and used, as ``transport/spares.py`` counts them; ``bench.py``'s command line for it
writes a report only where asked."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from benchmarks import distance, spare_counts
from benchmarks.rtt_proxy import in_thread
from petstore_contract.transport import spares as spares_module
from petstore_contract.transport.spares import Spares

TIMEOUT = 5.0  # seconds any socket operation here may wait


@pytest.fixture
def echo() -> Iterator[tuple[int, threading.Event]]:
    """A loopback server that echoes one connection's bytes; the event is set when that connection ends."""
    ended = threading.Event()
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(TIMEOUT)

    def serve() -> None:
        with listener, listener.accept()[0] as conn:
            conn.settimeout(TIMEOUT)
            while chunk := conn.recv(4096):
                conn.sendall(chunk)
        ended.set()

    thread = threading.Thread(target=serve, name="echo", daemon=True)
    thread.start()
    yield int(listener.getsockname()[1]), ended
    thread.join(TIMEOUT)


def relays() -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name == "rtt-relay"]


def test_the_relay_stops_with_its_block_and_closes_what_it_relayed(
    echo: tuple[int, threading.Event], caplog: pytest.LogCaptureFixture
) -> None:
    upstream, ended = echo
    before = relays()
    with in_thread(0.02, f"127.0.0.1:{upstream}") as port:
        client = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
        client.sendall(b"ping")
        assert client.recv(4096) == b"ping"
        assert len(relays()) == len(before) + 1
    with client:
        assert client.recv(4096) == b"", "the relayed connection was left open"
    assert ended.wait(TIMEOUT), "the upstream connection was left open"
    assert relays() == before, "the relay's thread did not end"
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT).close()
    # A connection cut as the relay stops is no error of the benchmark's: nothing reported (asyncio's log).
    assert not [r.getMessage() for r in caplog.records if r.name == "asyncio"]


def run(seconds: float, opened: int = 0, taken: int = 0, waited: int = 0) -> distance.Run:
    spares = distance.SpareCounts(opened=opened, taken=taken, waited=waited, wait_ms=waited * 150)
    return distance.Run(seconds, 2.0, 780, 321, "conformant", (("collection", 1.5), ("the tests", 0.5)), spares)


def test_the_table_sets_each_row_beside_its_kept_alive_row() -> None:
    runs = (run(11.0, 300, 200, 40), run(12.0, 320, 220, 60), run(30.0, 310, 210, 80))
    default = distance.Row(True, 100.0, "default", runs)
    kept = distance.Row(True, 100.0, "kept-alive", (run(10.0),))
    lines = distance.report([default, kept]).splitlines()
    assert "| TLS | 100 ms | default | 12.0 s (11.0-30.0) | **+20%** | 2.0 s | 780/780/780 (321/321/321) | " in lines[2]
    assert "| 310 / 210 | 60 (9.0 s) |" in lines[2]
    assert "| kept-alive | 10.0 s (10.0-10.0) |  |" in lines[3] and "| - | - |" in lines[3]
    assert "| collection | 1.50 |" in lines and "| **the run's process** | **2.00** |" in lines


def test_a_run_counts_the_requests_that_waited_for_a_spare_and_those_that_opened_their_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(spare_counts, "_takes", {"own": 0, "waited": 0, "wait_ms": 0.0})
    spare = object()

    def slow(key: object) -> object:
        time.sleep(0.02)  # a spare still opening when the request came
        return spare

    assert spare_counts._timed(slow)(("k", "h", 1)) is spare  # type: ignore[arg-type]
    # One that found none and opened its own at once (timed by hand: a busy machine may pause any call for 1 ms).
    spare_counts._count(0.0, got=False)
    takes = spare_counts._takes
    assert (takes["own"], takes["waited"]) == (1, 1) and takes["wait_ms"] >= 20


def test_distance_only_writes_a_report_only_where_asked(tmp_path: Path) -> None:
    from test_benchmark_smoke import RESULTS, load_bench

    parse = load_bench().parse
    alone = parse(["--distance-only", "--repeats", "2"])
    assert (alone.distance_only, alone.repeats, alone.out) == (True, 2, None)
    assert parse(["--distance-only", "--out", str(tmp_path / "d.md")]).out == tmp_path / "d.md"
    assert parse([]).out == RESULTS and not parse([]).distance_only
    with pytest.raises(SystemExit):
        parse(["--distance-only", "--smoke"])  # one mode at most


class FakeConnection:
    """What a spare needs of a connection: ``connect``, ``close`` and ``is_connected``."""

    def __init__(self) -> None:
        self.is_connected = False

    def connect(self) -> None:
        self.is_connected = True

    def close(self) -> None:
        self.is_connected = False


def until(done: Callable[[], bool]) -> bool:
    """``done()`` within TIMEOUT seconds, polled."""
    deadline = time.monotonic() + TIMEOUT
    while not done() and time.monotonic() < deadline:
        time.sleep(0.01)
    return done()


class ClosedByTheServer(FakeConnection):
    def connect(self) -> None:
        self.is_connected = False  # open, then closed at the server's end before any request


def test_the_spares_count_what_became_of_each_one(monkeypatch: pytest.MonkeyPatch) -> None:
    spares, key = Spares(), (FakeConnection, "127.0.0.1", 1)
    monkeypatch.setattr(spares_module, "AGE_FLOOR", 60.0)  # none expires while the test takes them
    monkeypatch.setattr(spares_module, "AGE_CAP", 60.0)
    spares.note_answer(key, 1.0)  # at a distance: near, no spare is opened
    spares.replace(key, FakeConnection())
    assert until(lambda: spares.opened == 1)
    taken = spares.take(key)
    assert isinstance(taken, FakeConnection) and taken.is_connected and spares.taken == 1
    spares.replace(key, ClosedByTheServer())
    assert until(lambda: spares.opened == 2)
    assert spares.take(key) is None and spares.dropped == 1, "a spare found closed is dropped, and counted"
    monkeypatch.setattr(spares_module, "AGE_FLOOR", 0.05)
    monkeypatch.setattr(spares_module, "AGE_CAP", 0.05)
    spares.replace(key, FakeConnection())
    assert until(lambda: spares.expired == 1), "a spare no request took is closed at its age, and counted"
    spares.close()
    assert (spares.opened, spares.taken, spares.expired, spares.dropped) == (3, 1, 1, 1)


class SlowToOpen(FakeConnection):
    """A connection whose set-up lasts until ``opened`` is set (a handshake at a distance)."""

    def __init__(self, opened: threading.Event) -> None:
        super().__init__()
        self.opened = opened

    def connect(self) -> None:
        self.opened.wait(TIMEOUT)
        self.is_connected = True


def test_a_write_waits_for_a_spare_still_opening_at_most_a_set_up(monkeypatch: pytest.MonkeyPatch) -> None:
    """A spare begun before the write is ready no later than the write's own connection: the write waits for
    it (one write a spare), and no longer than the running mean of a set-up."""
    spares, key = Spares(), (SlowToOpen, "127.0.0.1", 2)
    monkeypatch.setattr(spares_module, "AGE_FLOOR", 60.0)
    monkeypatch.setattr(spares_module, "AGE_CAP", 60.0)
    spares.note_setup(key, 30.0)  # a set-up lasts long here: the waiting write is woken by the spare alone
    spares.note_answer(key, 1.0)  # at a distance
    handshake = threading.Event()
    spares.replace(key, SlowToOpen(handshake))
    taken: list[object] = []
    waiting = threading.Thread(target=lambda: taken.append(spares.take(key)), daemon=True)
    waiting.start()
    assert until(lambda: spares.claims.get(key) == 1), "the write does not wait for the spare that is opening"
    assert spares.take(key) is None, "a second write waits for a spare the first one waits for"
    handshake.set()
    waiting.join(TIMEOUT)
    assert len(taken) == 1 and isinstance(taken[0], SlowToOpen) and taken[0].is_connected
    assert spares.claims[key] == 0 and spares.taken == 1
    other = (SlowToOpen, "127.0.0.1", 3)
    spares.note_setup(other, 0.2)
    spares.note_answer(other, 1.0)
    stuck = threading.Event()
    spares.replace(other, SlowToOpen(stuck))
    started = time.monotonic()
    assert spares.take(other) is None, "a spare that does not open is waited for past a set-up"
    assert time.monotonic() - started >= 0.2 * 0.99
    stuck.set()
    spares.close()


def test_a_write_that_came_while_its_spare_was_opening_has_more_opened(monkeypatch: pytest.MonkeyPatch) -> None:
    """Writes that come faster than their spares' set-ups (a burst over TLS at 100 ms) find one opening: each
    such write has ``LATE_SPARES`` more opened, up to ``MOST``, so that the spares run ahead of the writes."""
    spares, key = Spares(), (SlowToOpen, "127.0.0.1", 4)
    monkeypatch.setattr(spares_module, "AGE_FLOOR", 60.0)
    monkeypatch.setattr(spares_module, "AGE_CAP", 60.0)
    spares.note_setup(key, 30.0)
    spares.note_answer(key, 1.0)
    handshake = threading.Event()
    spares.replace(key, SlowToOpen(handshake))
    late = threading.Thread(target=spares.take, args=(key,), daemon=True)
    late.start()
    assert until(lambda: spares.claims.get(key) == 1)
    handshake.set()
    late.join(TIMEOUT)
    spares.replace(key, SlowToOpen(handshake))  # the late write's own replacement, and two more
    more = 1 + spares_module.LATE_SPARES
    assert spares_module.LATE_SPARES == 2 and until(lambda: spares.opened == 1 + more), "a late write has two more"
    assert until(lambda: spares.opening == 0) and spares.opened == 1 + more, "and no more than those"
    for _ in range(spares_module.MOST + 5):
        spares.replace(key, SlowToOpen(handshake))
    assert until(lambda: spares.opening == 0)
    assert sum(len(ready) for ready in spares.ready.values()) == spares_module.MOST, "held spares stay within MOST"
    spares.close()


def test_near_a_write_opens_its_own_connection_and_no_spare() -> None:
    """Where answers come within ``FAR`` (loopback, a LAN: no round trip is longer than an answer), a spare
    would save a write a millisecond and cost a handshake's CPU (over TLS, one for each closed unused): none
    is opened, however long a set-up took (a proxy near the client accepts at once, and it is the answers
    that show a distance behind it), and while any of the last ``WINDOW`` answers came within it (a busy
    client's answers on loopback often take longer: a round trip is the least an answer takes)."""
    spares, key = Spares(), (FakeConnection, "127.0.0.1", 5)
    spares.note_setup(key, 30.0)
    spares.note_answer(key, spares_module.FAR / 10)
    spares.replace(key, FakeConnection())
    assert (spares.opening, spares.opened, spares.take(key)) == (0, 0, None)
    for _ in range(spares_module.WINDOW - 1):  # one answer at once within the window: still near
        spares.note_answer(key, 1.0)
    spares.replace(key, FakeConnection())
    assert (spares.opening, spares.opened) == (0, 0), "one answer within FAR in the window reads as near"
    spares.note_answer(key, 1.0)  # the window's answers all a distance away
    spares.replace(key, FakeConnection())
    assert until(lambda: spares.opened == 1), "at a distance, the write's spare is opened"
    spares.close()
