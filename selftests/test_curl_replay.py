"""Issue 47: a report's curl line sends exactly the bytes that were judged, and only the key's variable
is left to the shell.

Each body goes through the path a real request takes (``build_exchange``: the key redacted to its
variable, the record kept), then its ``curl`` line runs in ``bash -c`` against a loopback server that
records what arrives: the body's bytes, the key in the Authorization header, and no Content-Type that
the request did not carry.  Bodies: ``@file`` (curl would read a file), ``$HOME`` and ``${HOME}``,
backticks and ``$(...)``, quotes and backslashes, newlines and CR, bytes that are not UTF-8, a NUL, the
key itself inside the body, an empty body.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from netpeers import PeerServer, Seen, json_ok
from petstore_contract.core import replay
from petstore_contract.core.records import Exchange
from petstore_contract.core.redaction import Redactor
from petstore_contract.transport.answers import build_exchange

KEY = "SECRET-canary-curl-9b1f7e"
VARIABLE = "PETSTORE_API_KEY"
BODIES = {
    "at-file": b"@/etc/hostname",
    "at-stdin": b"@-",
    "home": b'{"name": "$HOME ${HOME} $PETSTORE_API_KEYS $1"}',
    "backticks": b'{"name": "`id` $(id) ; rm -rf x &"}',
    "quotes": b'{"name": "it\'s \\"quoted\\" \\\\ back"} \' \'\\\'\' !! !$',
    "newlines": b'{"name": "line1\nline2\r\nline3\ttab"}',
    "not-utf-8": b'{"name": "\xff\xfe\x80 caf\xc3\xa9 \xc3"}',
    "nul": b'{"name": "nul\x00byte\xff"}',
    "key-inside": ('{"name": "' + KEY + '", "again": "x' + KEY + '"}').encode(),
    "unicode": '{"name": "Ŝnuĉjo 🐶 猫 \u2028"}'.encode(),
    "empty": b"",
}
CONTENT_TYPES = {"at-file": None, "empty": None, "not-utf-8": "application/octet-stream"}

pytestmark = pytest.mark.skipif(not (shutil.which("curl") and shutil.which("bash")), reason="needs curl and bash")


@pytest.fixture(scope="module")
def echo() -> PeerServer:  # type: ignore[misc]
    with PeerServer(json_ok) as peer:
        yield peer


def _exchange(url: str, body: bytes, content_type: str | None) -> Exchange:
    headers = {"Authorization": f"Bearer {KEY}", "Accept": "application/json"}
    if content_type:
        headers["Content-Type"] = content_type
    return build_exchange(Redactor(KEY, VARIABLE), "POST", url, headers, body, status=200)


def _replay(echo: PeerServer, command: str, shell: str = "bash") -> Seen:
    before = len(echo.requests)
    env = {"PATH": os.environ["PATH"], VARIABLE: KEY, "HOME": "/home/replayed", "PETSTORE_API_KEYS": "other"}
    done = subprocess.run([shell, "-c", command], env=env, capture_output=True, timeout=30, check=False)
    assert done.returncode == 0, (command, done.stderr)
    assert len(echo.requests) == before + 1, command
    return echo.requests[-1]


@pytest.mark.parametrize("name", list(BODIES))
def test_the_curl_line_sends_the_judged_bytes(echo: PeerServer, name: str) -> None:
    body = BODIES[name]
    content_type = CONTENT_TYPES.get(name, "application/json")
    url = f"{echo.base_url}/pets?q=$HOME&key={KEY}&x='y'"
    command = _exchange(url, body, content_type).curl(VARIABLE)
    assert KEY not in command, "the key goes only via its variable"
    assert "\n" not in command, "one line"
    seen = _replay(echo, command)
    assert seen.body == body, (command, seen.body)
    assert seen.headers["authorization"] == f"Bearer {KEY}"
    assert seen.headers.get("content-type") == content_type, "curl adds no Content-Type of its own"
    assert seen.path == f"/v1/pets?q=$HOME&key={KEY}&x='y'"


def test_only_the_key_variable_is_left_to_the_shell() -> None:
    exchange = Exchange("GET", "http://h/v1/pets", (("Authorization", f"Bearer ${VARIABLE}"),))
    assert exchange.curl(VARIABLE) == f'curl -sS -i -X GET -H "Authorization: Bearer ${VARIABLE}" http://h/v1/pets'
    # Without the variable's name nothing is left to the shell.
    assert "'Authorization: Bearer $PETSTORE_API_KEY'" in exchange.curl()
    # A name that only begins with the variable's, or another variable, stays literal.
    assert replay.word(f"${VARIABLE}S $HOME", VARIABLE) == f"'${VARIABLE}S $HOME'"
    assert replay.word(f"a`b ${VARIABLE}", VARIABLE) == f"'a`b '\"${VARIABLE}\""
    assert replay.word(f"a'b ${VARIABLE}", VARIABLE) == f'"a\'b ${VARIABLE}"'  # nothing to expand but it


def test_plain_bodies_replay_in_a_posix_sh_too(echo: PeerServer) -> None:
    """Single quotes and the printf pipe are POSIX: sh (dash here) replays them; $'...' needs bash or zsh."""
    for name in ("at-file", "home", "backticks", "quotes", "key-inside", "nul"):
        command = _exchange(echo.base_url + "/pets", BODIES[name], "application/json").curl(VARIABLE)
        assert "--data-raw $'" not in command, name
        assert _replay(echo, command, "sh").body == BODIES[name], (name, command)


def test_a_cut_body_says_it_is_not_the_judged_bytes() -> None:
    exchange = _exchange("http://h/v1/pets", b"x" * 5_000, "application/json")
    assert exchange.request_body_base64 is None
    assert exchange.curl(VARIABLE).endswith("does not send the bytes that were judged")


def test_the_exact_bytes_survive_the_record_and_the_redaction() -> None:
    exchange = _exchange("http://h/v1/pets", BODIES["not-utf-8"] + KEY.encode(), "application/json")
    assert exchange.request_body is not None and "\ufffd" in exchange.request_body
    again = Exchange.from_dict(exchange.to_dict())  # as summary.json keeps it
    assert again.request_body_base64 == exchange.request_body_base64
    assert KEY.encode() not in (again.request_body_base64 or "").encode()
