"""Certification bundles, end to end: ``petstore-contract certify`` against the embedded reference, then
``petstore-contract verify`` on the bundle as made and tampered with.

One certification run of the default profile (the whole suite, about 10 s on 2 cores) makes the
bundle; each tampering works on a copy of it.  The HAR is checked against the HAR 1.2 fields a
browser's developer tools read (and opened by Chromium through Playwright, when there is one).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tomllib
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from gatekit import KEY, chromium_browser, command, one_line, served, tool
from petstore_contract.commands.bundle import SELF_HASH, manifest_hash
from petstore_contract.core.redaction import KeyFragments
from petstore_contract.transport import TargetProblem, Transport, TransportOptions, har

HTTP_LAYER = tomllib.loads(
    (Path(__file__).resolve().parents[1] / "src/petstore_contract/interface/http_layer.toml").read_text("utf-8")
)

FILES = ("summary.json", "report.html", "summary.md", "junit.xml", "exchanges.har", "manifest.json")


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bundle") / "acme-1.2"
    done = tool("certify", "--product", "Acme Pet Store", "--product-version", "1.2.0", "--out", str(out), "-q")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1].startswith(f"bundle: {out} (Conformant: ")
    return out


@pytest.fixture
def bundle(made: Path, tmp_path: Path) -> Path:
    """A copy of the bundle to tamper with."""
    return Path(shutil.copytree(made, tmp_path / "copy"))


def verify(directory: Path) -> tuple[int, str]:
    """``petstore-contract verify DIR`` in this process (the tampering tests: what verify judges); the
    console script's own run is ``test_a_bundle_of_the_reference_verifies``'s."""
    done = command("verify", str(directory))
    assert "Traceback" not in done.stdout + done.stderr
    lines = (done.stdout + done.stderr).strip().splitlines()
    assert len(lines) == 1, lines
    return done.returncode, lines[0]


def test_a_bundle_of_the_reference_verifies(made: Path) -> None:
    assert sorted(p.name for p in made.iterdir()) == sorted(FILES)
    code, line = verify(made)
    assert code == 0 and line.startswith("verified: conformant (Conformant: ")
    done = tool("verify", str(made))  # the console script, as a user runs it
    assert (done.returncode, done.stdout.strip(), done.stderr) == (0, line, "")


def test_the_manifest_says_what_was_run(made: Path) -> None:
    manifest = json.loads((made / "manifest.json").read_text(encoding="utf-8"))
    summary = json.loads((made / "summary.json").read_text(encoding="utf-8"))
    assert manifest["product"] == {"name": "Acme Pet Store", "version": "1.2.0"}
    for name in ("suite_version", "spec_sha256", "seed", "profile", "started", "finished", "verdict"):
        assert manifest[name] == summary[name], name
    assert manifest["python"].count(".") == 2 and manifest["platform"]
    assert manifest["profile"] == "default" and manifest["target"]["name"] == "embedded"
    for name in FILES[:-1]:
        digest = hashlib.sha256((made / name).read_bytes()).hexdigest()
        assert manifest["files"][name] == {"sha256": digest, "bytes": (made / name).stat().st_size}
    assert "not_selected" not in {c["outcome"] for c in summary["clauses"]}, "certify runs the whole suite"


# The HAR 1.2 fields (http://www.softwareishard.com/blog/har-12-spec/) that browsers' importers read.
REQUEST_FIELDS = ["method", "url", "httpVersion", "cookies", "headers", "queryString", "headersSize", "bodySize"]
RESPONSE_FIELDS = ["status", "statusText", "httpVersion", "cookies", "headers", "content", "redirectURL"]
RESPONSE_FIELDS += ["headersSize", "bodySize"]
NAME_VALUE = {"type": "array", "items": {"type": "object", "required": ["name", "value"]}}
HAR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["log"],
    "properties": {
        "log": {
            "type": "object",
            "required": ["version", "creator", "entries"],
            "properties": {
                "version": {"const": "1.2"},
                "creator": {"type": "object", "required": ["name", "version"]},
                "pages": {"type": "array", "items": {"required": ["startedDateTime", "id", "title", "pageTimings"]}},
                "entries": {"type": "array", "items": {"$ref": "#/$defs/entry"}},
            },
        }
    },
    "$defs": {
        "entry": {
            "type": "object",
            "required": ["startedDateTime", "time", "request", "response", "cache", "timings"],
            "properties": {
                "startedDateTime": {"type": "string", "pattern": r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$"},
                "time": {"type": "number", "minimum": 0},
                "request": {
                    "type": "object",
                    "required": REQUEST_FIELDS,
                    "properties": {"headers": NAME_VALUE, "queryString": NAME_VALUE, "cookies": {"type": "array"}},
                },
                "response": {
                    "type": "object",
                    "required": RESPONSE_FIELDS,
                    "properties": {
                        "status": {"type": "integer"},
                        "headers": NAME_VALUE,
                        "content": {"type": "object", "required": ["size", "mimeType"]},
                    },
                },
                "timings": {
                    "type": "object",
                    "required": ["send", "wait", "receive"],
                    "properties": {name: {"type": "number", "minimum": 0} for name in ("send", "wait", "receive")},
                },
            },
        }
    },
}


def test_the_har_holds_every_exchange_of_the_run(made: Path) -> None:
    har = json.loads((made / "exchanges.har").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(HAR_SCHEMA).validate(har)
    entries = har["log"]["entries"]
    summary = json.loads((made / "summary.json").read_text(encoding="utf-8"))
    # Every exchange, the stateful walks' (sent on the run's pool beside the other tests) among them.
    assert len(entries) == summary["requests"] > 500
    assert [e["startedDateTime"] for e in entries] == sorted(e["startedDateTime"] for e in entries)
    methods = {e["request"]["method"] for e in entries}
    layer = {case["method"] for group in HTTP_LAYER["groups"] for case in group["cases"]}  # the HTTP layer's
    assert methods == {"GET", "POST"} | layer, methods
    statuses = {e["response"]["status"] for e in entries}
    assert {200, 201, 400, 401, 404} <= statuses
    safe = ("GET", "HEAD", "OPTIONS", "TRACE")  # RFC 9110 §9.2.1; every other method counts as a write
    assert sum(e["request"]["method"] not in safe for e in entries) == summary["writes"]
    posted = [e for e in entries if e["request"]["method"] == "POST" and e["response"]["status"] == 201]
    assert all(e["request"]["postData"]["text"] and e["response"]["content"]["text"] for e in posted)
    valid = {h["value"] for e in entries for h in e["request"]["headers"] if h["name"] == "Authorization"}
    assert "Bearer $PETSTORE_API_KEY" in valid


def test_the_har_opens_in_a_browser(made: Path) -> None:
    """Chromium (through Playwright) serves the recorded answers from the HAR: it reads the file."""
    browser = chromium_browser()
    har = json.loads((made / "exchanges.har").read_text(encoding="utf-8"))
    listed = next(  # a page of animals, not the empty store of the pre-flight request
        e
        for e in har["log"]["entries"]
        if e["request"]["method"] == "GET"
        and e["response"]["status"] == 200
        and len(e["response"]["content"]["text"]) > 2
    )
    with browser() as chromium:
        context = chromium.new_context(java_script_enabled=False)
        context.route_from_har(str(made / "exchanges.har"), not_found="abort")
        page = context.new_page()
        answer = page.goto(listed["request"]["url"])
        assert answer is not None and answer.status == 200
        same = [e for e in har["log"]["entries"] if e["request"]["url"] == listed["request"]["url"]]
        assert answer.text() in {e["response"]["content"].get("text", "") for e in same}  # the URL may repeat
        context.close()


# -- tampering ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", FILES)
def test_one_byte_changed_in_any_file_fails(bundle: Path, name: str) -> None:
    path = bundle / name
    data = bytearray(path.read_bytes())
    at = _letter_near(data, len(data) // 2)
    data[at] = ord("x") if data[at] != ord("x") else ord("y")
    path.write_bytes(bytes(data))
    code, line = verify(bundle)
    assert code == 1 and line.startswith(f"not verified: {bundle}: {name}"), line


def _letter_near(data: bytearray, middle: int) -> int:
    """A letter inside the file (a JSON value, not its syntax), at or after ``middle``."""
    return next(i for i in range(middle, len(data)) if chr(data[i]).isalpha())


def test_an_edited_outcome_fails(bundle: Path) -> None:
    summary = json.loads((bundle / "summary.json").read_text(encoding="utf-8"))
    summary["clauses"][0]["outcome"] = "violated"
    (bundle / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    code, line = verify(bundle)
    assert code == 1 and "summary.json was changed after the bundle was made" in line


def test_an_edited_outcome_fails_even_with_the_hashes_recomputed(bundle: Path) -> None:
    """Whoever rewrites the hashes too cannot make the evidence say what it does not."""
    summary = json.loads((bundle / "summary.json").read_text(encoding="utf-8"))
    clause = summary["clauses"][0]
    for outcome, words in (
        ("violated", "summary.json: not a valid summary.json at clauses/0/findings"),  # a violation needs evidence
        ("undecided", "summary.json: its verdict is 'conformant', its clauses give 'inconclusive'"),
        ("not_selected", f"summary.json: clause {clause['id']} says not_selected, but a certification run selects"),
    ):
        clause["outcome"] = outcome
        _rewrite(bundle, summary)
        code, line = verify(bundle)
        assert code == 1 and words in line, (outcome, line)
    # a verdict edited, with its rows left as they are
    clause["outcome"], summary["verdict"], summary["exit_code"] = "conforms", "not_conformant", 1
    _rewrite(bundle, summary)
    code, line = verify(bundle)
    assert code == 1 and "summary.json: its verdict is 'not_conformant', its clauses give 'conformant'" in line


def _rewrite(bundle: Path, summary: dict[str, Any]) -> None:
    path = bundle / "summary.json"
    path.write_text(json.dumps(summary, indent=2), encoding="utf-8")
    manifest = json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))
    manifest["files"]["summary.json"] = {"sha256": hashlib.sha256(path.read_bytes()).hexdigest(), "bytes": 0}
    manifest[SELF_HASH] = manifest_hash(manifest)
    (bundle / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")


@pytest.mark.parametrize("name", ["junit.xml", "exchanges.har", "manifest.json"])
def test_a_removed_file_fails(bundle: Path, name: str) -> None:
    (bundle / name).unlink()
    code, line = verify(bundle)
    assert code == 1 and line.startswith(f"not verified: {bundle}: {name} is missing"), line


def test_an_added_file_fails(bundle: Path) -> None:
    (bundle / "notes.txt").write_text("trust me\n", encoding="utf-8")
    code, line = verify(bundle)
    assert code == 1 and "notes.txt is not in the manifest" in line


def test_verify_needs_a_directory(tmp_path: Path) -> None:
    done = tool("verify", str(tmp_path / "nowhere"))
    assert done.returncode == 2 and "no such directory" in one_line(done)
    done = tool("verify")
    assert done.returncode == 2 and "usage: petstore-contract verify DIR" in one_line(done)


# -- what certify refuses ------------------------------------------------------------------------------

REFUSED = {
    "-k": (["-k", "auth"], "certify refuses -k"),
    "-m": (["-m", "must"], "certify refuses -m"),
    "read-only": (["--contract-read-only"], "certify refuses read-only mode"),
    "production": (["--contract-target", "production"], "certify refuses read-only mode"),
    "waivers": (["--contract-waivers=waivers.toml"], "certify refuses waivers"),
    "budget": (["--contract-run-budget", "600"], "certify refuses --contract-run-budget"),
    "quick": (["--contract-profile", "quick"], "certify refuses --contract-profile quick"),
    "a test path": (["tests/test_list.py"], "certify runs the whole suite"),
}


@pytest.mark.parametrize("case", REFUSED)
def test_certify_refuses_a_partial_run(case: str, tmp_path: Path) -> None:
    args, words = REFUSED[case]
    out = tmp_path / "out"
    env = {"PETSTORE_PRODUCTION_API_KEY": KEY}
    done = tool("certify", "--product", "A", "--product-version", "1", "--out", str(out), *args, env=env)
    assert done.returncode == 4 and words in one_line(done), done.stdout[-2000:] + done.stderr
    assert not out.exists() or not any(out.iterdir())


def test_certify_needs_its_own_options_and_an_empty_directory(tmp_path: Path) -> None:
    done = tool("certify", "--product", "A", "--out", str(tmp_path))
    assert done.returncode == 4 and "--product-version" in one_line(done)
    (tmp_path / "old.txt").write_text("x", encoding="utf-8")
    done = tool("certify", "--product", "A", "--product-version", "1", "--out", str(tmp_path))
    assert done.returncode == 4 and "must be a new or empty directory" in one_line(done)


# Tier 2: in tier 1 the near misses are shown redacted without a run (below).
@pytest.mark.tier_2
def test_no_key_in_any_file_of_a_bundle(tmp_path: Path) -> None:
    """Against a server with a known key: neither the key nor a near miss of it (the credential table
    sends the key with a character removed, its prefix, its case changed) is in any file."""
    out = tmp_path / "bundle"
    with served("--fault", "auth_key_prefix") as base_url:
        args = ("--product", "A", "--product-version", "1", "--out", str(out), "--base-url", base_url, "-q")
        done = tool("certify", *args, env={"PETSTORE_API_KEY": KEY})
    assert done.returncode == 1, done.stdout[-2000:]
    assert verify(out)[0] == 0
    fragments = {KEY[:-1], KEY.swapcase(), KEY[: len(KEY) // 2 + 1], KEY[1:]}
    for path in out.iterdir():
        text = path.read_text(encoding="utf-8")
        assert KEY not in text and not any(f in text for f in fragments), path.name
    assert "$PETSTORE_API_KEY" in (out / "exchanges.har").read_text(encoding="utf-8")


# -- the recorder and the key's near misses, without a run ------------------------------------------------


def test_a_request_without_answer_is_an_entry_with_status_0(tmp_path: Path) -> None:
    options = TransportOptions(base_url="http://127.0.0.1:9/v1", api_key=KEY, circuit_breaker=0)
    transport = Transport(options)
    fragments = KeyFragments(KEY)
    recorder = har.Recorder(tmp_path, lambda text: fragments(transport.redact.for_exchange(text)))
    transport.adapter.watchers.append(recorder)
    with pytest.raises(TargetProblem):
        transport.request("GET", "/pets", params={"limit": 1}, headers={"X-Near": KEY[:-1]})
    recorder.close()
    transport.close()
    (entry,) = har.build(tmp_path, title="t", creator_version="0")["log"]["entries"]
    assert entry["response"]["status"] == 0 and "connection refused" in entry["_error"]
    headers = {h["name"]: h["value"] for h in entry["request"]["headers"]}
    assert headers["Authorization"] == "Bearer $PETSTORE_API_KEY" and headers["X-Near"] == "[REDACTED]"
    jsonschema.Draft202012Validator(HAR_SCHEMA).validate(har.build(tmp_path, title="t", creator_version="0"))


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (f"Bearer {KEY[:-1]}", "Bearer [REDACTED]"),
        (f"Bearer {KEY.swapcase()}", "Bearer [REDACTED]"),
        (f"{KEY[:12]}!", "[REDACTED]!"),
        (f"x{KEY[2:]}y", "x[REDACTED]y"),
        (f"id {KEY[:5]}", f"id {KEY[:5]}"),  # too short a run of the key to give it away
        ("nothing of the key", "nothing of the key"),
    ],
)
def test_near_misses_of_the_key_are_redacted(text: str, shown: str) -> None:
    assert KeyFragments(KEY)(text) == shown


@pytest.mark.tier_2
def test_under_xdist_every_worker_s_exchanges_reach_the_bundle(tmp_path: Path) -> None:
    """Two xdist workers (and set-up once, by the first): verify holds the HAR to the run's request count."""
    out = tmp_path / "bundle"
    done = tool("certify", "--product", "A", "--product-version", "1", "--out", str(out), "-q", "-n", "2")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    code, line = verify(out)
    assert code == 0 and line.startswith("verified: conformant")
    har = json.loads((out / "exchanges.har").read_text(encoding="utf-8"))
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert len(har["log"]["entries"]) == summary["requests"]
