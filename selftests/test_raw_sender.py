"""The HTTP layer's raw sender (``transport/raw.py``) against a hostile peer on loopback: whatever bytes the target
sends (a malformed interim answer, a body that decodes to far more than it weighs), the answer comes back as
data or as a one-line TargetProblem, never another exception."""

from __future__ import annotations

import gzip
import json
import socket
import threading
from collections.abc import Iterator
from dataclasses import fields, replace

import pytest
from requests.structures import CaseInsensitiveDict

from petstore_contract.core.records import Exchange
from petstore_contract.transport import TargetProblem, Transport
from petstore_contract.transport.answers import Answer, RawView, row_from_dict
from petstore_contract.transport.raw import DECODED_LIMIT, RawRequest, RawSender
from transportkit import options

Peer = tuple[str, list[bytes], threading.Event]


@pytest.fixture
def peer() -> Iterator[tuple[str, list[bytes], threading.Event]]:
    """A one-connection-at-a-time peer that reads a request head and answers with the bytes queued for it."""
    answers: list[bytes] = []
    started = threading.Event()
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(5)

    def serve() -> None:
        while answers:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(5)
                seen = b""
                while b"\r\n\r\n" not in seen and (piece := conn.recv(4096)):
                    seen += piece
                conn.sendall(answers.pop(0))

    thread = threading.Thread(target=lambda: (started.wait(5), serve()), daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1", answers, started
    listener.close()
    thread.join(timeout=5)


def _sender(base_url: str) -> RawSender:
    return RawSender(Transport(options(base_url, timeout=2.0)).adapter)


@pytest.mark.parametrize(
    "answer",
    [
        # a 1xx whose status is no number, then the final answer
        b"HTTP/1.1 1xy Weird\r\n\r\nHTTP/1.1 401 Unauthorized\r\nContent-Length: 2\r\n\r\n{}",
        b"HTTP/1.1 100 " + b"x" * 20000,  # an interim head that never ends
    ],
)
def test_a_malformed_interim_answer_is_data_or_one_line(peer: Peer, answer: bytes) -> None:
    base_url, answers, started = peer
    answers.append(answer)
    started.set()
    sender = _sender(base_url)
    request = RawRequest("POST", "/pets", (("Content-Type", "application/json"),), b"{}", expect_continue=True)
    try:
        got = sender.send(request)
    except TargetProblem as problem:
        assert "\n" not in str(problem)
        return
    assert got.status == 401, got.status


def test_a_body_that_decodes_to_gigabytes_is_decoded_up_to_a_bound(
    peer: Peer,
) -> None:
    base_url, answers, started = peer
    bomb = gzip.compress(b"0" * (4 * DECODED_LIMIT))
    answers.append(
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\n"
        + f"Content-Length: {len(bomb)}\r\n\r\n".encode()
        + bomb
    )
    started.set()
    got = _sender(base_url).send(RawRequest("GET", "/pets", (("Accept-Encoding", "gzip"),)))
    assert got.status == 200 and len(got.body) <= DECODED_LIMIT and len(got.raw_view().wire) == len(bomb)


@pytest.mark.parametrize(
    ("answer", "complete", "why"),
    [
        # past the run's --contract-max-body-bytes: the run's limit, not the target's unfinished answer
        (b"HTTP/1.1 200 OK\r\nContent-Length: 3000\r\n\r\n" + b" " * 3000, True, "the body exceeds 1000 bytes"),
        # fewer bytes than announced, then the target's close: an answer it left unfinished
        (b"HTTP/1.1 401 Unauthorized\r\nContent-Length: 300\r\n\r\n{}", False, "the answer ended before its framing"),
    ],
    ids=["capped-by-the-run", "cut-short-by-the-target"],
)
def test_only_the_target_leaves_an_answer_incomplete(peer: Peer, answer: bytes, complete: bool, why: str) -> None:
    base_url, answers, started = peer
    answers.append(answer)
    started.set()
    sender = RawSender(Transport(options(base_url, timeout=2.0, max_body_bytes=1000)).adapter)
    got = sender.send(RawRequest("GET", "/pets", ()))
    assert got.raw_view().complete is complete and got.raw_view().problem.startswith(why), got.raw_view().problem


def test_a_throttling_answer_is_waited_out_and_the_request_sent_again(peer: Peer) -> None:
    """A 429 (RFC 6585 §4: the request was not processed) is the target pacing the run, as for every other
    request: waited out as its Retry-After says, then sent again; the answer after it is the one judged."""
    base_url, answers, started = peer
    answers += [
        b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 0\r\nContent-Length: 0\r\n\r\n",
        b"HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
    ]
    started.set()
    transport = Transport(options(base_url, timeout=2.0))
    got = RawSender(transport.adapter).send(RawRequest("POST", "/pets", (), b"{}"))
    counters = transport.guard.counters()
    assert (got.status, counters["throttled"], counters["requests"]) == (401, 1, 2)


def test_an_answer_shared_between_the_runs_processes_keeps_every_field() -> None:
    """The HTTP layer's answers are sent once a run and shared as data (``tests/test_http_layer.py``): an
    answer the run stopped reading at its own limit stays complete on the other side, as on this one."""
    view = RawView(b"[]", True, "the body exceeds 1000 bytes (--contract-max-body-bytes); stopped reading", (100,))
    answer = Answer(
        200,
        CaseInsensitiveDict({"Content-Type": "application/json"}),
        b"[]",
        Exchange("GET", "http://127.0.0.1:1/v1/pets?limit=100", status=200),
        view,
    )
    back = row_from_dict(json.loads(json.dumps(answer.to_dict())))
    assert isinstance(back, Answer)
    assert [getattr(back, f.name) for f in fields(Answer)] == [getattr(answer, f.name) for f in fields(Answer)]
    plain = replace(answer, raw=None)
    again = row_from_dict(json.loads(json.dumps(plain.to_dict())))
    assert isinstance(again, Answer) and again.raw is None and again.raw_view() == RawView(b"[]")
