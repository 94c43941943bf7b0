"""``devtools/samerun.py``: what it normalises, what it keeps, and what ``compare`` says.

The unit tests run no suite; ``test_two_runs_of_one_seed_are_the_same`` (tier 2) records the embedded
reference and one fault twice and holds the normalisation to leaving nothing of a run's own behind.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from devtools import samerun
from devtools.samerun import Recording, Tokens
from petstore_contract.interface.jsontypes import JsonObject

TOKENS = Tokens("a1b2c3", frozenset({7, 12}), (("/work/checkout", "<checkout>"),))

# (what a run wrote, what the recording keeps)
SCRUBBED = [
    ('{"name": "pc-a1b2c3-own-0-65-3"}', '{"name": "pc-RUN-own-0-PID-3"}'),
    ("pc-a1b2c3-rej-no-categoryId", "pc-RUN-rej-no-categoryId"),
    ("run id a1b2c3, concurrency 1", "run id RUN, concurrency 1"),
    ("sha256 00a1b2c3ff", "sha256 00a1b2c3ff"),  # the id inside another word is not the id
    ("http://127.0.0.1:36647/v1/pets", "http://127.0.0.1:PORT/v1/pets"),
    ("started 2026-12-02T06:39:01Z", "started <date>"),
    ('timestamp="2026-12-02T06:39:02.218342+00:00"', 'timestamp="<timestamp>"'),
    ("date: Wed, 02 Dec 2026 06:39:03 GMT", "date: <http-date>"),
    ("Deprecation: @1764657543", "Deprecation: @<unix-seconds>"),
    ("<dd>1 min 16.2 s</dd> in 26.27s", "<dd><duration></dd> in <duration>"),
    ('<testcase name="x" time="0.014" />', '<testcase name="x" time="<time>" />'),
    ('<property name="preflight_ms" value="158" />', '<property name="preflight_ms" value="<timing>" />'),
    ("<dt>Pre-flight request (ms)</dt><dd>74</dd>", "<dt>Pre-flight request (ms)</dt><dd><timing></dd>"),
    ("-H 'X-Schemathesis-TestCaseId: M0BoZO'", "-H 'X-Schemathesis-TestCaseId: <case-id>'"),
    ("/work/checkout/tests/test_list.py", "<checkout>/tests/test_list.py"),
    ("reports in /tmp/petstore-suite-run-x81_q/reports", "reports in <tmp>/reports"),
    ("limit=100 answered 200 with 20 animals", "limit=100 answered 200 with 20 animals"),
    ('"name": "pc-a1b2c3-auth-93755a"', '"name": "pc-RUN-auth-<hash>"'),
    ('"name": "pc-a1b2c3-auth-scheme"', '"name": "pc-RUN-auth-scheme"'),
    ('"name": "pc-a0… (1,734 characters)', '"name": "pc-<cut>… (1,734 characters)'),
    ('"name": "pc-a1b2c3-fill-59-6… (9 characters)', '"name": "pc-<cut>… (9 characters)'),
    ('file="/tmp/v/lib/python3.11/site-packages/schemathesis/x.py"', 'file="<site-packages>/schemathesis/x.py"'),
    ("t7/v/lib/python3.11/site-packages/petstore_contract/suite/test_list.py::t", "suite/test_list.py::t"),
    ('"response_length": 83,', '"response_length": <length>,'),
    ('[\n  "content-length",\n  "83"\n]', '[\n  "content-length",\n  "<length>"\n]'),
    ("content-length: 84\nserver: x", "content-length: <length>\nserver: x"),
    ("Response: HTTP 200, 84 bytes", "Response: HTTP 200, <length> bytes"),
    (
        '<testcase classname="suite.t" name="x" line="151" time="1">',
        '<testcase classname="suite.t" name="x" line="<line>" time="<time>">',
    ),
    ("limit=100 answered 200, 20 animals", "limit=100 answered 200, 20 animals"),
]


@pytest.mark.parametrize(("raw", "kept"), SCRUBBED)
def test_a_runs_own_tokens_are_replaced_and_nothing_else(raw: str, kept: str) -> None:
    assert TOKENS.scrub(raw) == kept


def _exchange(method: str, url: str, body: str | None = None, status: int = 200, answer: str = "") -> JsonObject:
    headers: list[JsonObject] = [
        {"name": "Authorization", "value": "Bearer $PETSTORE_API_KEY"},
        {"name": "Content-Length", "value": "42"},
        {"name": "Host", "value": "127.0.0.1:36647"},
    ]
    request: JsonObject = {"method": method, "url": url, "headers": list(headers)}
    if body is not None:
        request["postData"] = {"text": body}
    return {"request": request, "response": {"status": status, "content": {"text": answer}}}


def test_ids_the_target_assigned_are_read_from_its_201s_only() -> None:
    exchanges = [
        _exchange("POST", "http://h/v1/pets", "{}", 201, '{"id": 7, "name": "a"}'),
        _exchange("POST", "http://h/v1/pets", "{}", 200, '{"id": 8}'),  # not a creation
        _exchange("POST", "http://h/v1/pets", "{}", 201, '{"id": true}'),  # not an id
        _exchange("POST", "http://h/v1/pets", "{}", 201, "not json"),
        _exchange("GET", "http://h/v1/pets/7", None, 200, '{"id": 9}'),
    ]
    assert samerun.assigned_ids(exchanges) == frozenset({7})


def test_a_request_keeps_what_the_suite_chose_and_not_what_the_run_made_unique() -> None:
    line = samerun.request_line(_exchange("GET", "http://127.0.0.1:36647/v1/pets/12?x=1"), TOKENS)
    assert json.loads(line) == ["GET", "/v1/pets/<id>", "x=1", "Authorization: Bearer $PETSTORE_API_KEY", "-"]
    probe = samerun.request_line(_exchange("GET", "http://127.0.0.1:1/v1/pets/13"), TOKENS)
    assert json.loads(probe)[1] == "/v1/pets/13"  # an id no create was given: a probe, kept
    huge = samerun.request_line(_exchange("GET", "http://127.0.0.1:1/v1/pets/" + "9" * 5000), TOKENS)
    assert "9" * 5000 in huge  # a number past int64 is no assigned id, and no error
    body = samerun.request_line(_exchange("POST", "http://h/v1/pets", '{"id": 12, "categoryId": 12}'), TOKENS)
    assert json.loads(body)[4] == '{"id": <id>, "categoryId": 12}'
    long = samerun.request_line(_exchange("POST", "http://h/v1/pets", "B" * 50_000), TOKENS)
    assert "<50000 characters, sha256 " in long and len(long) < 400


def _recorded(folder: Path, recordings: list[Recording]) -> Path:
    for recording in recordings:
        samerun.write(recording, folder / recording.target)
    (folder / samerun.MANIFEST).write_text("{}", encoding="utf-8")
    return folder


def _recording(
    target: str = "reference", requests: tuple[str, ...] = ("a", "b", "b"), verdict: str = "ok"
) -> Recording:
    reports = tuple((name, ("head", verdict)) for name in samerun.REPORTS)
    return Recording(target, requests, reports)


def _compare(a: Path, b: Path) -> tuple[int, list[str]]:
    out: list[str] = []
    return samerun.compare(a, b, out), out


def test_compare_says_same_for_a_recording_and_its_copy(tmp_path: Path) -> None:
    a = _recorded(tmp_path / "a", [_recording(), _recording("create_returns_200")])
    b = _recorded(tmp_path / "b", [_recording(), _recording("create_returns_200")])
    assert _compare(a, b) == (0, ["create_returns_200: same", "reference: same"])


def test_compare_names_requests_missing_and_extra_as_multisets(tmp_path: Path) -> None:
    a = _recorded(tmp_path / "a", [_recording(requests=("a", "b", "b"))])
    b = _recorded(tmp_path / "b", [_recording(requests=("a", "b", "c"))])
    status, out = _compare(a, b)
    assert status == 1
    assert out == [
        "reference: differs",
        "  requests missing in B: 1",
        "    1 x b",
        "  requests extra in B: 1",
        "    1 x c",
    ]


def test_compare_shows_the_report_lines_that_differ(tmp_path: Path) -> None:
    a = _recorded(tmp_path / "a", [_recording(verdict="Conformant")])
    b = _recorded(tmp_path / "b", [_recording(verdict="Not conformant")])
    status, out = _compare(a, b)
    assert status == 1
    assert "  summary.json: 2 lines differ" in out and "    -Conformant" in out and "    +Not conformant" in out


def test_a_target_recorded_on_one_side_only_is_a_difference(tmp_path: Path) -> None:
    a = _recorded(tmp_path / "a", [_recording()])
    b = _recorded(tmp_path / "b", [_recording(), _recording("auth_open_list")])
    assert _compare(a, b) == (1, ["auth_open_list: recorded in B only", "reference: same"])


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert samerun.main(["record", str(tmp_path / "r"), "--faults", "no_such_fault"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "samerun: unknown fault no_such_fault (python -m devtools.catalog --list names them)"
    ]
    assert samerun.main(["compare", str(tmp_path), str(tmp_path)]) == 2
    assert "holds no recording" in capsys.readouterr().err
    (tmp_path / "old").mkdir()
    assert samerun.main(["record", str(tmp_path), "--python", sys.executable]) == 2  # no stale target compared
    assert capsys.readouterr().err == f"samerun: {tmp_path} is not empty: record into a new folder\n"


def test_the_default_targets_are_the_reference_and_faults_of_four_clauses() -> None:
    from devtools.catalog import FAULTS

    targets = samerun.chosen_targets(None)
    assert targets[0] == samerun.REFERENCE_TARGET
    assert len({FAULTS[name].clause for name in targets[1:]}) == 4


@pytest.mark.tier_2
def test_two_runs_of_one_seed_are_the_same(tmp_path: Path) -> None:
    # This interpreter's suite (editable or not, the pool is the same for both runs): what differs is
    # only what a run makes unique, and the recording keeps none of it.
    for side in ("a", "b"):
        argv = ["record", str(tmp_path / side), "--python", sys.executable, "--faults", "create_returns_200"]
        assert samerun.main(argv) == 0
    status, out = _compare(tmp_path / "a", tmp_path / "b")
    assert (status, out) == (0, ["create_returns_200: same", "reference: same"]), "\n".join(out)
