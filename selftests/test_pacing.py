"""A throttling target slows the run, never fails it (issue 23): ``pacing.Pacer`` and a whole run.

The unit tests drive the pacer with real threads (waits bounded by generous timeouts, never a
sleep that asserts speed) or with a clock of their own where only its arithmetic is judged.  The
end-to-end test runs the suite in a subprocess against the reference behind a gateway's rate limit
(a token bucket of 40 requests a second, ``Variant.rate_limit_per_second``): the run must end
conformant, the target must see about its rate, and the 429s must stay few (against the same
gateway the fixed bound of before got 146 at 50 requests a second; this pacer 14-19 at 40-43).
"""

from __future__ import annotations

import dataclasses
import secrets
import threading
import time
from typing import Any

import pytest
import requests

from hosted import run_hosted
from netpeers import PeerServer
from petstore_contract.reference import REFERENCE, BackgroundServer, build_app
from petstore_contract.transport import Transport, TransportOptions
from petstore_contract.transport.pacing import DRY_WAVES, Pacer, Ticket

GENEROUS = 10.0  # seconds: how long a thread that should get through may take on a loaded machine
BLOCKED = 0.3  # seconds a thread that must stay blocked is watched for
RATE = 40.0  # the gateway's requests a second in the end-to-end test


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Sender(threading.Thread):
    """A thread that takes one slot from ``pacer`` and says when it has it."""

    def __init__(self, pacer: Pacer) -> None:
        super().__init__(daemon=True)
        self.pacer = pacer
        self.got = threading.Event()
        self.ticket: Ticket | None = None

    def run(self) -> None:
        self.ticket = self.pacer.acquire(GENEROUS)
        self.got.set()


def senders(pacer: Pacer, count: int) -> list[Sender]:
    started = [Sender(pacer) for _ in range(count)]
    for sender in started:
        sender.start()
    return started


def through(started: list[Sender]) -> list[Sender]:
    return [s for s in started if s.got.is_set()]


def wait_for(condition: Any, timeout: float = GENEROUS) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


# -- the limit -------------------------------------------------------------------------------------


def test_a_wave_of_throttled_answers_halves_the_limit_once() -> None:
    clock, cuts = Clock(), []
    pacer = Pacer(8, on_cut=cuts.append, clock=clock)
    wave = [pacer.acquire(0) for _ in range(6)]
    clock.now += 0.01
    for ticket in wave:  # everything in flight answered 429 at once: one cut
        assert ticket is not None
        pacer.throttled(ticket)
    assert (pacer.limit, cuts) == (4, [4])
    for expected in (2, 1):  # each 429 to a request sent after the last cut cuts again
        clock.now += 0.01
        ticket = pacer.acquire(0)
        assert ticket is not None
        clock.now += 0.01
        pacer.throttled(ticket)
        assert pacer.limit == expected
    assert (pacer.lowest, cuts, pacer.in_flight) == (1, [4, 2, 1], 0)


def test_a_target_that_lets_nothing_through_is_not_paused_for() -> None:
    clock, cuts = Clock(), []
    pacer = Pacer(8, on_cut=cuts.append, clock=clock)

    def throttle(pause: float) -> None:
        ticket = pacer.acquire(0)
        assert ticket is not None
        clock.now += 0.01
        pacer.throttled(ticket, pause)

    for _ in range(DRY_WAVES):  # waves of 429s in a row, nothing let through: each cuts and pauses
        throttle(1.0)
        clock.now += 1.0
    assert cuts == [4, 2, 1] and pacer.rate() is None
    # From now on a 429 changes nothing: no cut, no pause for the others (each throttled request
    # waits out its own Retry-After in the transport), so the run does not crawl a request a second.
    throttle(30.0)
    ticket = pacer.acquire(0)
    assert ticket is not None and cuts == [4, 2, 1]
    # An answer gets through (a run of 1 at limit 1: the limit is 2): a 429 is a wave again.
    pacer.answered(ticket)
    clock.now += 0.01
    throttle(1.0)
    assert cuts == [4, 2, 1, 1] and pacer.acquire(0) is None  # and everyone pauses
    clock.now += 1.0
    throttle(1.0)
    assert cuts == [4, 2, 1, 1, 1] and pacer.lowest == 1  # never below 1


def test_runs_of_answers_raise_the_limit_one_at_a_time_up_to_the_maximum() -> None:
    clock = Clock()
    pacer = Pacer(4, clock=clock)
    first = pacer.acquire(0)
    assert first is not None
    clock.now += 0.01
    pacer.throttled(first)
    assert pacer.limit == 2
    clock.now += 0.01
    seen = []
    for _ in range(12):
        ticket = pacer.acquire(0)
        assert ticket is not None
        pacer.answered(ticket)
        seen.append(pacer.limit)
    # a run of ``limit`` answers adds one: 2 answers make it 3, 3 more make it 4, and 4 is the most
    assert seen == [2, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4]
    assert Pacer(0).limit == 1  # never below one, whatever the configuration says


def test_waiting_senders_go_only_under_the_current_limit() -> None:
    pacer = Pacer(2)
    held = [pacer.acquire(0), pacer.acquire(0)]
    assert None not in held and pacer.acquire(0) is None  # at the limit, a sender that will not wait gets none
    waiting = senders(pacer, 3)
    time.sleep(BLOCKED)
    assert through(waiting) == []
    first, second = held
    assert first is not None and second is not None
    pacer.throttled(first)  # the limit is now 1 and one request is still in flight: nobody goes
    time.sleep(BLOCKED)
    assert through(waiting) == [] and pacer.limit == 1
    # A slot under the new limit: exactly one sender gets it (an answer to a request sent before the
    # cut says nothing of the new limit, so it does not raise it).
    pacer.answered(second)
    assert wait_for(lambda: len(through(waiting)) == 1)
    time.sleep(BLOCKED)
    assert len(through(waiting)) == 1 and pacer.in_flight == 1 and pacer.limit == 1
    ticket = through(waiting)[0].ticket
    assert ticket is not None
    pacer.answered(ticket)  # a run of 1 answer at limit 1: the limit is 2, both others go
    assert wait_for(lambda: len(through(waiting)) == 3)
    assert pacer.limit == 2 and pacer.in_flight == 2 and all(s.ticket is not None for s in waiting)


def test_a_retry_after_holds_every_sender_not_only_the_throttled_one() -> None:
    pacer = Pacer(8)
    ticket = pacer.acquire(0)
    assert ticket is not None
    paused = time.monotonic()  # before the pause starts: what follows is measured from no later than it
    pacer.throttled(ticket, pause=1.5)
    assert pacer.acquire(0.05) is None  # free slots, but the target asked for a pause
    waiting = senders(pacer, 3)
    assert wait_for(lambda: len(through(waiting)) == 3)
    # None went before the pause was over, however long the machine took to get here.
    assert time.monotonic() - paused >= 1.5 - 0.01
    assert all(s.ticket is not None for s in waiting)


def test_close_ends_every_pause() -> None:
    pacer = Pacer(4)
    ticket = pacer.acquire(0)
    assert ticket is not None
    pacer.throttled(ticket, pause=3600)
    waiting = senders(pacer, 2)
    time.sleep(BLOCKED)
    assert through(waiting) == []
    pacer.close()
    assert wait_for(lambda: len(through(waiting)) == 2)


# -- the pace --------------------------------------------------------------------------------------


def test_after_a_throttled_answer_sends_are_spaced_at_the_rate_let_through() -> None:
    clock = Clock()
    pacer = Pacer(8, clock=clock)
    assert pacer.rate() is None  # not throttled: not paced
    for _ in range(16):  # 8 answers a second for 2 s (steps that are exact binary fractions)
        ticket = pacer.acquire(0)
        assert ticket is not None
        clock.now += 0.125
        pacer.answered(ticket)
    clock.now += 0.0625
    ticket = pacer.acquire(0)
    assert ticket is not None
    pacer.throttled(ticket, pause=1.0)  # a 429 asking for 1 s
    assert pacer.acquire(0) is None  # the pause
    clock.now += 1.0
    assert pacer.rate() == 8.0  # the last second's answers (the window is the Retry-After, 1 s at least)
    assert pacer.acquire(0) is not None
    assert pacer.acquire(0) is None  # the next send is 1/8 s later
    clock.now += 0.125
    assert pacer.acquire(0) is not None
    clock.now += 0.875
    assert pacer.rate() == 12.0  # growing while no 429 comes: by half the rate each second
    # A 429 with nothing let through in its window halves the pace: never below half, never faster.
    late = pacer.acquire(0)
    assert late is not None
    clock.now += 1.5
    pacer.throttled(late, pause=1.0)
    assert pacer.rate() == (8.0 + 4.0 * 2.5) / 2


def test_the_first_throttled_answer_without_any_answer_before_paces_nothing() -> None:
    clock = Clock()
    pacer = Pacer(8, clock=clock)
    ticket = pacer.acquire(0)
    assert ticket is not None
    pacer.throttled(ticket, pause=0.0)
    assert pacer.rate() is None and pacer.limit == 4


def test_a_target_answering_only_429_ends_the_requests_about_as_fast_as_before() -> None:
    """Each throttled request waits out its own Retry-After once nothing gets through: 32 requests
    sent 4 times each with 0.2 s waits take about 3 waits on 8 threads, not 128 pauses in a row."""
    with PeerServer(lambda seen: (429, {"Retry-After": "1"}, b"")) as peer:
        options = TransportOptions(base_url=peer.base_url, api_key="k", concurrency=8, retry_after_cap=0.2)
        transport = Transport(options)
        started = time.monotonic()
        try:
            statuses = transport.map(lambda i: transport.request("GET", f"/pets/{i}").status, range(32))
        finally:
            transport.close()
        elapsed = time.monotonic() - started
    assert statuses == [429] * 32 and len(peer.requests) == 32 * 4
    # A bound from what the test configures: every sender paused at each 429 would wait out the 96 waits one
    # after the other (32 requests x 3 re-sends x 0.2 s); waits side by side take about 3 x 0.2 s a thread.
    one_after_another = 32 * 3 * 0.2
    assert elapsed < one_after_another / 2, elapsed
    assert transport.guard.counters()["throttle_wait_s"] == pytest.approx(one_after_another)


# -- the gateway and a whole run -------------------------------------------------------------------


class Seen:
    """ASGI wrapper: when each answer started and its status."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.answers: list[tuple[float, int]] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        async def watched(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                self.answers.append((time.monotonic(), message["status"]))
            await send(message)

        await self.app(scope, receive, watched if scope["type"] == "http" else send)


def test_the_reference_rate_limit_is_a_token_bucket_in_front_of_the_service() -> None:
    key = "gate-" + secrets.token_urlsafe(12)
    app = build_app(key, dataclasses.replace(REFERENCE, rate_limit_per_second=2))
    with BackgroundServer(app) as server, requests.Session() as session:
        headers = {"Authorization": f"Bearer {key}"}
        statuses = [session.get(f"{server.base_url}/pets", headers=headers, timeout=5) for _ in range(8)]
    assert [a.status_code for a in statuses][:2] == [200] * 2  # a full bucket: one second's worth
    refused = [a for a in statuses if a.status_code == 429]
    assert refused and all(a.headers["Retry-After"] == "1" for a in refused)
    assert app.state.store.routed == 8 - len(refused)  # a refused request never reached the service


@pytest.mark.tier_2
def test_a_rate_limited_target_slows_the_run_and_sees_about_its_rate() -> None:
    key = "pace-" + secrets.token_urlsafe(12)
    seen = Seen(build_app(key, dataclasses.replace(REFERENCE, rate_limit_per_second=RATE)))
    with BackgroundServer(seen) as server:  # type: ignore[arg-type]
        run = run_hosted(server.base_url, key, "--contract-concurrency", "8", timeout=300)
    assert run.exit_code == 0 and run.verdict == "conformant", run.output[-3000:]
    summary = run.summary
    refused = sum(1 for _, status in seen.answers if status == 429)
    span = seen.answers[-1][0] - seen.answers[0][0]
    offered = len(seen.answers) / span
    facts = (
        f"{len(seen.answers)} requests in {span:.1f} s ({offered:.1f}/s), {refused} answered 429; "
        f"counters {summary['requests']} in {summary['duration_s']} s, lowest concurrency {summary['concurrency_min']}"
    )
    print(facts)
    # The run was throttled, slowed down and said so.
    assert summary["throttled"] > 0 and summary["concurrency_min"] < 8, facts
    assert "the target throttled" in run.output and "requests in flight went down to" in run.output, run.output[-2000:]
    # The target saw about its rate (what a full bucket lets through at once comes on top), and few 429s:
    # with the fixed bound of before about 145 of them here, at 49.7 requests a second.
    assert offered <= RATE * 1.2 and summary["requests"] / summary["duration_s"] <= RATE * 1.2, facts
    assert refused <= 60, facts
    # Its time is the rate's, not the waits': about requests / rate.
    assert summary["duration_s"] <= 2 * summary["requests"] / RATE, facts
