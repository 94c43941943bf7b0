"""``petstore-contract replay``, end to end: a bundle certified against a faulty server (no challenge on
any 401), its findings sent again to that server, to the fixed reference started on the same port, to
a server that now lets the request through, and to nothing at all.

One certification run (default profile, about 15 s); each replay is one request.  At the end, which
program the run's own replay line names (``core/replay.suite_program``): the lines themselves are run in
``test_console_script.py`` (the editable install) and ``test_wheel.py`` (the installed wheel).
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gatekit import KEY, free_port, one_line, served, tool
from petstore_contract.core import replay as core_replay
from petstore_contract.judging.checks import CannotRejudge, check_for

FAULT = "auth_no_challenge"


@pytest.fixture(scope="module")
def port() -> int:
    return free_port()


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory, port: int) -> Iterator[Path]:
    out = tmp_path_factory.mktemp("replay") / "bundle"
    with served("--fault", FAULT, port=port) as base_url:
        args = ("--product", "A", "--product-version", "1", "--out", str(out), "--base-url", base_url, "-q")
        done = tool("certify", *args, env={"PETSTORE_API_KEY": KEY})
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-2000:]
    yield out


def finding(made: Path, source: str) -> dict[str, Any]:
    summary = json.loads((made / "summary.json").read_text(encoding="utf-8"))
    found = [f for c in summary["clauses"] for f in c["findings"] if f["source"] == source]
    assert found and all(f["expectation"] == "bearer-challenge" for f in found)
    return found[0]


def replay(made: Path, finding_id: str, key: str | None = KEY) -> tuple[int, str]:
    done = tool("replay", str(made), finding_id, env={"PETSTORE_API_KEY": key} if key else {})
    assert "Traceback" not in done.stdout + done.stderr
    lines = (done.stdout + done.stderr).strip().splitlines()
    assert len(lines) == 1, lines
    return done.returncode, lines[0]


# The tests of a bundle's findings judged again (``made``: a certification run, the default profile, about
# 20 s of CPU) are tier 2's; tier 1 pins what replay can run again (below) and test_curl_replay.py the
# curl lines.
@pytest.mark.tier_2
@pytest.mark.parametrize("source", ["targeted", "generated"])
def test_still_violated_against_the_faulty_server_then_fixed(made: Path, port: int, source: str) -> None:
    chosen = finding(made, source)["id"]
    with served("--fault", FAULT, port=port):
        code, line = replay(made, chosen)
    assert code == 1 and line.startswith(f"still violated: {chosen} (auth.challenge): expected a WWW-Authenticate"), (
        line
    )
    with served(port=port):  # the fixed server, where the faulty one was
        code, line = replay(made, chosen)
    assert code == 0 and line == f"no longer reproduced: {chosen} (auth.challenge): bearer-challenge holds (HTTP 401)"


@pytest.mark.tier_2
def test_an_answer_the_check_does_not_apply_to_cannot_be_rejudged(made: Path, port: int) -> None:
    """The same request now served without credentials (another fault): no 401, no challenge to judge."""
    chosen = next(
        f["id"]
        for f in _all(made)
        if f["signature"]["operation"] == "GET /pets"
        and not any(name.lower() == "authorization" for name, _ in f["exchange"]["request_headers"])
    )
    with served("--fault", "auth_open_list", port=port):
        code, line = replay(made, chosen)
    assert code == 6 and line.startswith(f"cannot re-judge {chosen} (auth.challenge): the answer is now HTTP 200")


@pytest.mark.tier_2
def test_a_target_that_does_not_answer_cannot_rejudge(made: Path) -> None:
    code, line = replay(made, finding(made, "targeted")["id"])  # nothing listens on the port now
    assert code == 6 and "cannot re-judge" in line and "the target did not answer" in line


@pytest.mark.tier_2
def test_bad_input_is_one_line_and_exit_2(made: Path, tmp_path: Path) -> None:
    chosen = finding(made, "targeted")["id"]
    code, line = replay(made, "auth.challenge/99999")
    assert code == 2 and "no finding 'auth.challenge/99999'" in line
    code, line = replay(made, chosen, key=None)
    assert code == 2 and "PETSTORE_API_KEY is not set" in line
    tampered = Path(shutil.copytree(made, tmp_path / "tampered"))
    (tampered / "junit.xml").unlink()
    code, line = replay(tampered, chosen)
    assert code == 2 and "does not verify: junit.xml is missing" in line
    done = tool("replay", str(made))
    assert done.returncode == 2 and "usage" in one_line(done)


def _all(made: Path) -> list[dict[str, Any]]:
    summary = json.loads((made / "summary.json").read_text(encoding="utf-8"))
    return [f for c in summary["clauses"] for f in c["findings"]]


@pytest.mark.parametrize(
    ("expectation", "why"),
    [
        ("same-field:name", "compares a field with what the suite created"),
        ("schemathesis:JsonSchemaError", "Schemathesis' checks judge an answer against the generated case"),
        ("", "records no kind"),
        ("status:abc", "malformed"),
        ("telepathy", "no check of kind 'telepathy'"),
    ],
)
def test_checks_that_cannot_be_run_again_say_why(expectation: str, why: str) -> None:
    with pytest.raises(CannotRejudge, match=why):
        check_for(expectation)


def test_each_expect_check_records_a_kind_replay_can_run() -> None:
    for expectation in ("status:200,404", "no-5xx", "json-media-type", "error-body", "json-body", "pet-list"):
        assert callable(check_for(expectation))


# -- the run's own replay line: the program that runs the suite where the report was made --------------


def test_the_replay_program_is_the_console_script_where_it_is_on_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scripts = tmp_path / "env dir" / "bin"
    scripts.mkdir(parents=True)
    script = scripts / core_replay.SCRIPT
    script.write_text("#!/bin/sh\n", encoding="utf-8")
    script.chmod(0o755)
    monkeypatch.setattr(core_replay.sysconfig, "get_path", lambda name: str(scripts))
    monkeypatch.setenv("PATH", str(scripts))
    assert core_replay.suite_program(tmp_path) == "petstore-contract"
    monkeypatch.setenv("PATH", "/nonexistent")
    assert core_replay.suite_program(tmp_path) == "'env dir/bin/petstore-contract'"  # the checkout's .venv/bin/...
    assert core_replay.suite_program(tmp_path / "elsewhere") == f"'{script}'"


def test_an_environment_without_the_script_replays_with_its_python(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Installed without its scripts (``pip install --target``): the module, by the run's own interpreter."""
    monkeypatch.setattr(core_replay.sysconfig, "get_path", lambda name: str(tmp_path))
    assert core_replay.suite_program(tmp_path) == f"{core_replay.single(sys.executable)} -m petstore_contract.cli"


def test_the_replay_line_quotes_its_values() -> None:
    line = core_replay.rerun(
        "petstore-contract", [("--base-url", "https://x.example/a b/v1"), ("--contract-read-only", None)]
    )
    assert line == "petstore-contract --base-url 'https://x.example/a b/v1' --contract-read-only"
