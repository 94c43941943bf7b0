"""``petstore-contract replay DIR FINDING_ID``: send a finding's request again and judge it with the same check.

The bundle must verify first.  The request is the finding's recorded exchange, with the key put back
from the environment variable the bundle names (``$PETSTORE_API_KEY`` in the record), sent through the
suite's transport only to the bundle's target origin, and judged by the check the finding recorded
(``rejudge``).  Exit codes:

- 1 ``still violated``: the same check fails again (the observation is printed);
- 0 ``no longer reproduced``: it holds now;
- 6 ``cannot re-judge``: the check needs more than one answer, the request is not kept whole (a body
  cut, an encoding of the key the bundle replaced by ``[REDACTED]``), or the target did not answer;
- 2 a bundle that does not verify, an unknown finding id, the key's variable not set, a request to
  another origin than the bundle's target.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

import requests

from petstore_contract.commands import bundle
from petstore_contract.core.records import Exchange
from petstore_contract.core.redaction import KeyFragments, Redactor
from petstore_contract.interface.jsontypes import JsonObject
from petstore_contract.judging import checks as rejudge
from petstore_contract.judging.reask import resend, whole
from petstore_contract.reporting.readback import findings, json_text, load
from petstore_contract.run.target import KEY_ENV
from petstore_contract.transport import Answer, TargetProblem, Transport, TransportOptions, origin

EXIT_GONE, EXIT_STILL, EXIT_BAD_INPUT, EXIT_CANNOT = 0, 1, 2, 6
TIMEOUT = 30.0


class ReplayError(Exception):
    """A replay that cannot start; ``str()`` is one line, ``code`` the exit code."""

    def __init__(self, message: str, code: int = EXIT_BAD_INPUT) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class Bundled:
    """What the replay takes from the bundle: the finding, its target and where the key comes from."""

    finding: JsonObject
    base_url: str
    key_env: str


HELP = """usage: petstore-contract replay DIR FINDING_ID

Sends the request of one finding of a certification bundle (its id is in summary.json and the reports)
to the bundle's target again, with the key from the variable the bundle names, and judges the answer
with the check the finding recorded.  Exit 1: still violated; 0: no longer reproduced; 6: cannot
re-judge; 2: a bundle that does not verify, an unknown id, the key's variable not set."""


def main(argv: list[str]) -> int:
    if argv in (["--help"], ["-h"]):
        print(HELP)
        return 0
    if len(argv) != 2 or any(arg.startswith("-") for arg in argv):
        print("petstore-contract replay: usage: petstore-contract replay DIR FINDING_ID", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        line, code = replay(Path(argv[0]), argv[1])
    except ReplayError as exc:
        line, code = f"petstore-contract replay: {exc}" if exc.code == EXIT_BAD_INPUT else str(exc), exc.code
    print(line)
    return code


def replay(directory: Path, finding_id: str) -> tuple[str, int]:
    """The one line to print and the exit code; the line is redacted as every output of the suite is
    (the answer it quotes may echo the key)."""
    found = _from_bundle(directory, finding_id)
    key = os.environ.get(found.key_env, "").strip()
    scrub = KeyFragments(key)
    redactor = Redactor(key, found.key_env)
    try:
        line, code = _rejudged(found, finding_id)
    except ReplayError as exc:
        raise ReplayError(scrub(redactor(str(exc))), exc.code) from None
    return scrub(redactor(line)), code


def _rejudged(found: Bundled, finding_id: str) -> tuple[str, int]:
    exchange, expectation = _exchange(found), str(found.finding.get("expectation", ""))
    clause = found.finding["clause"]
    try:
        check = rejudge.check_for(expectation)
        answer = _send(exchange, found)
        mismatch = rejudge.judge(check, answer)
    except rejudge.CannotRejudge as exc:
        raise ReplayError(f"cannot re-judge {finding_id} ({clause}): {exc}", EXIT_CANNOT) from None
    if mismatch is not None:
        observed = " ".join(mismatch.observed.split())[:300]
        return f"still violated: {finding_id} ({clause}): expected {mismatch.expected}; observed {observed}", EXIT_STILL
    return f"no longer reproduced: {finding_id} ({clause}): {expectation} holds (HTTP {answer.status})", EXIT_GONE


def _from_bundle(directory: Path, finding_id: str) -> Bundled:
    if not directory.is_dir():
        raise ReplayError(f"{directory}: no such directory")
    try:
        bundle.verify(directory)
    except bundle.BundleError as exc:
        raise ReplayError(f"{directory} does not verify: {exc}") from None
    summary = load(directory / bundle.SUMMARY)
    listed = {json_text(f.get("id")): f for f in findings(summary)}
    if finding_id not in listed:
        some = ", ".join(list(listed)[:5]) or "none"
        raise ReplayError(f"no finding {finding_id!r} in {directory} (its findings: {some})")
    return Bundled(listed[finding_id], str(summary["base_url"]), str(summary.get("key_env") or KEY_ENV))


def _exchange(found: Bundled) -> Exchange:
    recorded = found.finding.get("exchange")
    if not isinstance(recorded, dict) or not recorded:
        raise ReplayError(f"cannot re-judge {found.finding['id']}: it records no request", EXIT_CANNOT)
    exchange = Exchange.from_dict(recorded)
    if origin(exchange.url) != origin(found.base_url):
        where = f"{origin(exchange.url)}, not the bundle's target {origin(found.base_url)}"
        raise ReplayError(f"{found.finding['id']}'s request goes to {where}: not sent")
    if not whole(exchange):
        why = "the recorded request is not whole (a value cut, or an encoding of the key the bundle redacted)"
        raise ReplayError(f"cannot re-judge {found.finding['id']}: {why}", EXIT_CANNOT)
    return exchange


def _send(exchange: Exchange, found: Bundled) -> Answer:
    """The recorded request, the key put back from its variable, through the suite's guarded transport."""
    key = os.environ.get(found.key_env, "").strip()
    if not key:
        raise ReplayError(f"{found.key_env} is not set: replay takes the key from the variable the bundle names")
    transport = Transport(
        TransportOptions(base_url=found.base_url, api_key=key, key_env=found.key_env, timeout=TIMEOUT)
    )
    try:
        return resend(transport, exchange, TIMEOUT)
    except TargetProblem as problem:
        raise rejudge.CannotRejudge(f"the target did not answer: {problem}") from None
    except (requests.exceptions.RequestException, ValueError) as exc:  # e.g. a header requests will not send
        line = " ".join(str(exc).split())[:200]
        raise rejudge.CannotRejudge(
            f"the recorded request cannot be sent again ({type(exc).__name__}: {line})"
        ) from None
    finally:
        transport.close()
