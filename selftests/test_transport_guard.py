"""The transport's redaction of the key and its guard (budget, timeout, the breaker shared between
processes, counters merged, Retry-After parsed): no server needed.
"""

from __future__ import annotations

import email.utils
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from petstore_contract.core.records import Exchange
from petstore_contract.core.redaction import REDACTED, Redactor
from petstore_contract.transport import (
    BREAKER_FILE,
    RunGuard,
    TargetProblem,
    merge_counters,
    parse_retry_after,
)

ROOT = Path(__file__).resolve().parents[1]


# -- redaction ------------------------------------------------------------------------------------


def test_redactor_replaces_key_and_its_encodings() -> None:
    key = "s3cr3t/key+value=="
    redact = Redactor(key)
    import base64
    from urllib.parse import quote

    b64 = base64.b64encode(f"user:{key}".encode()).decode()
    text = f"Bearer {key}; q={quote(key, safe='')}; basic {b64}"
    assert redact(text) == f"Bearer {REDACTED}; q={REDACTED}; basic {REDACTED}"
    assert redact.for_exchange(text) == f"Bearer $PETSTORE_API_KEY; q={REDACTED}; basic {REDACTED}"
    assert Redactor(key, "STAGING_KEY").for_exchange(f"Bearer {key}") == "Bearer $STAGING_KEY"
    assert redact.note == ""


def test_redactor_short_key_only_as_whole_token() -> None:
    redact = Redactor("k")
    assert "shorter than 8 characters" in redact.note and "\n" not in redact.note
    assert redact("Authorization: Bearer k") == f"Authorization: Bearer {REDACTED}"
    assert redact.for_exchange("Bearer k") == "Bearer $PETSTORE_API_KEY"
    # Surrounding text is never corrupted: "k" inside words, paths or values stays.
    untouched = 'kind: ok, keys=k1 /k/ k.k k-k {"kok": 1} key=k'
    assert redact(untouched) == untouched
    assert redact('{"name": "k"} k') == f'{{"name": "{REDACTED}"}} {REDACTED}'


def test_redactor_without_key_and_with_regex_characters() -> None:
    assert Redactor(None)("Bearer anything") == "Bearer anything"
    assert Redactor("")("x") == "x"
    key = "a+b*c?d(1)[2]$"
    assert Redactor(key)(f"x {key} y") == f"x {REDACTED} y"


# -- guard ----------------------------------------------------------------------------------------


def test_guard_budget_and_timeout() -> None:
    guard = RunGuard(deadline=time.time() + 100, budget=100)
    assert guard.budget_spent() is None
    assert guard.timeout(10) == 10
    assert 0 < RunGuard(deadline=time.time() + 2).timeout(10) <= 2
    spent = RunGuard(deadline=time.time() - 1, budget=30)
    with pytest.raises(TargetProblem) as caught:
        spent.check()
    assert caught.value.kind == "budget"
    assert str(caught.value) == "run budget of 30 s spent (--contract-run-budget); request not sent"
    assert spent.first_problem == str(caught.value)


def test_guard_breaker_opens_after_n_in_a_row_and_is_shared(tmp_path: Path) -> None:
    shared = tmp_path / "run"
    one, other = RunGuard(circuit_breaker=3, shared_dir=shared), RunGuard(circuit_breaker=3, shared_dir=shared)
    one.failed("a: refused")
    one.failed("b: refused")
    one.answered()  # not in a row
    one.failed("c: refused")
    one.failed("d: refused")
    assert one.breaker_open() is None and other.breaker_open() is None
    one.failed("e: refused")
    expected = "target unusable: 3 requests in a row got no answer (last: e: refused); no more requests are sent"
    assert one.breaker_open() == expected
    assert (shared / BREAKER_FILE).read_text().strip() == expected
    with pytest.raises(TargetProblem) as caught:
        other.check()  # another guard (process) sharing the directory
    assert (caught.value.kind, str(caught.value)) == ("target", expected)
    assert one.first_problem == "a: refused"
    assert one.counters()["no_answer"] == 5
    # A separate process of the run sees it too.
    code = "from petstore_contract.transport import RunGuard; import sys; RunGuard(shared_dir=sys.argv[1]).check()"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(
        [sys.executable, "-c", code, str(shared)], capture_output=True, text=True, timeout=60, env=env, check=False
    )
    assert done.returncode == 1 and expected in done.stderr


def test_guard_breaker_disabled_and_counters_merged(tmp_path: Path) -> None:
    never = RunGuard(circuit_breaker=0)
    for _ in range(10):
        never.failed("refused")
    never.check()
    first, second = RunGuard(), RunGuard()
    first.count_sent("GET")
    first.count_sent("POST")
    second.count_sent("delete")
    second.count_throttled(1.5)
    second.count_repeat()
    first.note_concurrency(8)
    second.note_concurrency(8)
    second.note_concurrency(2)  # throttled down to 2 in flight: the run's lowest, not a sum
    failed = Exchange("POST", "http://127.0.0.1:1/v1/pets", status=500, response_body="oops")
    second.note_server_error(failed)
    second.note_server_error(failed)  # the same request line and status: kept once
    first.write_counters(tmp_path / "counters-gw0.json")
    second.write_counters(tmp_path / "counters-gw1.json")
    (tmp_path / "unrelated.json").write_text('{"requests": 100}')
    assert merge_counters(tmp_path) == {
        "requests": 3,
        "writes": 2,
        "no_answer": 0,
        "throttled": 1,
        "throttle_wait_s": 1.5,
        "repeats_not_sent": 1,
        "created": 0,
        "held_back": 0,
        "connection_resets": 0,
        "unknown_writes": 0,
        "stalled_answers": 0,
        "busy_resends": 0,
        "bodies_cut": 0,
        "writes_found": 0,
        "layer_requests": 0,
        "layer_kinds": 0,
        "layer_bytes": 0,
        "concurrency_min": 2,
        "server_errors": [failed.to_dict()],
    }


def test_parse_retry_after() -> None:
    now = time.time()
    assert parse_retry_after("120") == 120
    assert parse_retry_after(None) is None and parse_retry_after("soon") is None
    later = email.utils.formatdate(now + 30, usegmt=True)
    assert 28 <= parse_retry_after(later, now) <= 31  # type: ignore[operator]
    assert parse_retry_after(email.utils.formatdate(now - 30, usegmt=True), now) == 0
