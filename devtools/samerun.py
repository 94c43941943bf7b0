"""Proof that a change left what a user sees alone: for one seed, the same requests and the same reports.

``python -m devtools.samerun record DIR [--faults a,b,c] [--checkout PATH | --python PY]`` runs the contract
suite (``--contract-seed``, one request at a time) against the embedded reference and a few faults of the
catalog, served by this checkout (``devtools.catalog``), and writes per target the multiset of requests the
suite sent (its own record, ``--contract-record``) and its reports (``summary.json``, ``summary.md``,
``junit.xml``, ``report.html``), each normalised: the run's id and the names carrying it, the ids the target
assigned, ports, dates, times, durations and temporary paths are replaced by placeholders.
``python -m devtools.samerun compare A B`` prints per target ``same`` or its first differences and exits 1
on any difference.

The suite under test is installed from its wheel (``--checkout``, in a virtual environment of its own) and
run from an empty folder: Hypothesis 6.170 draws some strings and numbers from the constants of the loaded
modules outside site-packages (``hypothesis.internal.conjecture.providers._get_local_constants``), so from
an editable install any change of the suite's source would have the seed draw other cases; no setting,
profile or environment variable of Hypothesis turns that pool off (docs/self-proof.md, "The same run").
``--python`` runs the suite an interpreter has installed instead (the manifest says whether Hypothesis'
pool holds its source).
"""

from __future__ import annotations

import argparse
import base64
import collections
import contextlib
import difflib
import hashlib
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from devtools.catalog import FAULTS, catalog_app
from devtools.launcher import ROOT, pytest_args
from petstore_contract.interface.jsontypes import JsonObject, JsonValue
from petstore_contract.reference import REFERENCE, BackgroundServer

SEED = 20301205
PROFILE = "quick"  # the catalog's profile (``killmatrix.QUICK``)
# One fault of each kind the brief of the comparison names: a create's status, a header, credentials, a list.
DEFAULT_FAULTS = ("create_returns_200", "read_no_deprecation", "auth_open_list", "list_ignores_limit")
REFERENCE_TARGET = "reference"  # the embedded reference (no --base-url)
REPORTS = ("summary.json", "summary.md", "junit.xml", "report.html")
REQUESTS, MANIFEST = "requests.txt", "manifest.json"
RUN_TIMEOUT = 900.0
SHOWN, LONG_BODY = 8, 2000  # differences printed per file; characters of a request body kept (a longer: its hash)
# Timing facts of summary.json: what the machine's speed sets, never the suite's behaviour.
TIMING_KEYS = frozenset({"started", "finished", "duration_s", "throttle_wait_s", "preflight_ms"})
# Request headers every request carries as transport sets them (length, the port): not the suite's choice.
TRANSPORT_HEADERS = frozenset({"content-length", "host"})
# What varies between two runs of one seed on one commit, each with its placeholder (in order: the names with
# the run's id after the id; paths only from their start, as a scan from every character of a body is slow).
SCRUBS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(pc-RUN-[A-Za-z0-9-]*)-\d{1,3}-(\d+)(?![A-Za-z0-9-])"), r"\1-PID-\2"),  # tag-<pid % 1000>-<n>
    (re.compile(r"pc-(RUN[A-Za-z0-9-]*|[0-9a-f]{0,5})…"), "pc-<cut>…"),  # a name a report cut short
    (re.compile(r"pc-RUN-auth-[0-9a-f]{6}(?![A-Za-z0-9-])"), "pc-RUN-auth-<hash>"),  # hashed with the key
    (re.compile(r"(127\.0\.0\.1|localhost):\d+"), r"\1:PORT"),
    (re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:?\d\d)?"), "<date>"),
    (re.compile(r"\b(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d \w{3} \d{4} \d\d:\d\d:\d\d GMT"), "<http-date>"),
    (re.compile(r"@\d{9,10}\b"), "@<unix-seconds>"),
    (re.compile(r'\b(time|timestamp|hostname)="[^"]*"'), r'\1="<\1>"'),
    (re.compile(r"\b(\d+ ?(h|min) )*\d+(\.\d+)? ?(s|ms|seconds|min)\b"), "<duration>"),
    (re.compile(r'(<property name="(duration_s|preflight_ms|throttle_wait_s)" value=")[^"]*'), r"\1<timing>"),
    (re.compile(r"(Pre-flight request \(ms\)\D{0,20})\d+"), r"\1<timing>"),
    (re.compile(r"(X-Schemathesis-TestCaseId\W{1,12})[A-Za-z0-9]{6}(?![A-Za-z0-9])"), r"\1<case-id>"),
    (re.compile(r"(?<![^\s\"'=<>\\])[^\s\"'=<>\\]*/site-packages/petstore_contract/suite/"), "suite/"),
    (re.compile(r'classname="[^"]*\.site-packages\.petstore_contract\.suite\.'), 'classname="suite.'),
    (re.compile(r"(?<![^\s\"'=<>\\])[^\s\"'=<>\\]*/site-packages/"), "<site-packages>/"),
    (re.compile(r"/tmp/[^/\s\"'<>\\]+"), "<tmp>"),
    # Lengths follow from the bodies, which are compared: a name's tag carries the pid's digits (1 to 3).
    (re.compile(r'("response_length":\s*)\d+'), r"\1<length>"),
    (re.compile(r'("content-length",\s*")\d+"', re.IGNORECASE), r'\1<length>"'),
    (re.compile(r"(?im)^(content-length:\s*)\d+"), r"\1<length>"),
    (re.compile(r"(HTTP \d{3}, )\d+( bytes)"), r"\1<length>\2"),
    # A testcase's line is where its source lies, not what it did.
    (re.compile(r'(<testcase [^>]*\bline=")\d+'), r"\1<line>"),
)
# Hypothesis' statistics in junit.xml (base64 properties): its phases' times and runtimes are the machine's.
STATISTICS = re.compile(r'(<property name="hypothesis-statistics-[^"]*" value=")([A-Za-z0-9+/=]+)(")')
DECIMAL = re.compile(r"[0-9]{1,19}")  # an int64 as the target assigns them (a longer number is a probe)
TIMED_LINE = re.compile(r"runtimes|seconds\)")


class UsageError(Exception):
    """Bad input: one line, exit 2."""


@dataclass(frozen=True)
class Tokens:
    """What one run made unique: its id, the ids its target assigned, the folders it ran in."""

    run_id: str
    assigned: frozenset[int]
    paths: tuple[tuple[str, str], ...]  # (absolute path, placeholder), inner folders first

    def scrub(self, text: str) -> str:
        for path, placeholder in self.paths:
            text = text.replace(path, placeholder)
        if self.run_id:
            text = re.sub(rf"\b{re.escape(self.run_id)}\b", "RUN", text)
        for pattern, placeholder in SCRUBS:
            text = pattern.sub(placeholder, text)
        return text


AGAIN = Tokens("", frozenset(), ())  # the table's scrubs alone, which ``compare`` applies to what it reads


@dataclass(frozen=True)
class Suite:
    """The suite under test: an interpreter, its contract tests, and whether Hypothesis' pool holds its code."""

    python: str
    tests: str
    local: bool


@dataclass(frozen=True)
class Recording:
    """One target's run, normalised: its requests (one line each, sorted) and each report's lines."""

    target: str
    requests: tuple[str, ...]
    reports: tuple[tuple[str, tuple[str, ...]], ...]


PROBE = (
    "import importlib.resources, pathlib, petstore_contract, sysconfig\n"
    "shipped = importlib.resources.files('petstore_contract') / 'suite'\n"
    "here = pathlib.Path(petstore_contract.__file__).resolve()\n"
    "tests = shipped if shipped.is_dir() else here.parents[2] / 'tests'\n"
    "site = pathlib.Path(sysconfig.get_paths()['purelib']).resolve()\n"
    "print(tests); print(here.is_relative_to(site))\n"
)


def suite_of(python: str) -> Suite:
    """The contract tests ``python`` runs: the wheel's ``petstore_contract/suite``, else the checkout's tests/."""
    python = shutil.which(python) or python
    python = os.path.abspath(python)  # not resolved: a virtual environment's interpreter is its link
    done = subprocess.run([python, "-c", PROBE], capture_output=True, text=True, timeout=120, check=False)
    lines = done.stdout.split()
    if done.returncode != 0 or len(lines) != 2:
        raise UsageError(f"{python} has no petstore_contract installed ({done.stderr.strip()[-200:]})")
    return Suite(python, lines[0], lines[1] != "True")


@contextlib.contextmanager
def installed(checkout: Path) -> Iterator[Suite]:
    """``checkout`` installed from its wheel (not editable) in a virtual environment of its own, for the run."""
    if not (checkout / "pyproject.toml").is_file():
        raise UsageError(f"{checkout} is not a checkout of the suite (no pyproject.toml)")
    with tempfile.TemporaryDirectory(prefix="samerun-venv-") as folder:
        python = str(Path(folder) / "bin" / "python")
        subprocess.run([sys.executable, "-m", "venv", folder], check=True, timeout=300)
        pins = ("-c", str(checkout / "constraints.txt")) if (checkout / "constraints.txt").is_file() else ()
        pip = [python, "-m", "pip", "install", "-q", "--disable-pip-version-check", *pins, str(checkout)]
        done = subprocess.run(pip, capture_output=True, text=True, timeout=1800, check=False)
        if done.returncode != 0:
            raise UsageError(f"pip could not install {checkout}: {done.stderr.strip()[-300:]}")
        yield suite_of(python)


def run_target(suite: Suite, target: str, seed: int, profile: str, out: Path) -> Recording:
    """The suite against ``target`` (the embedded reference or a fault of the catalog); its recording."""
    key = "samerun-" + secrets.token_urlsafe(12)
    with tempfile.TemporaryDirectory(prefix="samerun-run-") as folder, _served(target, key) as base_url:
        work = Path(folder)
        reports, record, cwd = work / "reports", work / "record", work / "cwd"
        cwd.mkdir()
        args = ("--contract-seed", str(seed), "--contract-profile", profile, "--contract-concurrency", "1")
        # Plain asserts, as the console script and the checkout's ini ask; test ids from the suite's folder.
        extra = (*args, f"--contract-record={record}", "--assert=plain", f"--rootdir={Path(suite.tests).parent}")
        command = [suite.python, "-m", "pytest", *pytest_args(reports, base_url, extra, Path(suite.tests))]
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PETSTORE_", "HYPOTHESIS_"))}
        env["HYPOTHESIS_STORAGE_DIRECTORY"] = str(work / "hypothesis")  # no example database of an earlier run
        env |= {"PETSTORE_API_KEY": key} if base_url else {}
        done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT)
        (out / "output.txt").write_text(done.stdout + done.stderr, encoding="utf-8")
        summary = _json_file(reports / "summary.json")
        run_id = summary.get("run_id") if isinstance(summary, dict) else None
        exchanges = [e for path in sorted(record.glob("exchanges-*.jsonl")) for e in _json_lines(path)]
        paths = ((str(work), "<run>"), (str(Path(suite.python).parents[1]), "<python>"), (str(ROOT), "<checkout>"))
        tokens = Tokens(run_id if isinstance(run_id, str) else "", assigned_ids(exchanges), paths)
        texts = [(name, _report_lines(reports / name, tokens)) for name in REPORTS]
        return Recording(target, tuple(sorted(request_line(e, tokens) for e in exchanges)), tuple(texts))


@contextlib.contextmanager
def _served(target: str, key: str) -> Iterator[str | None]:
    if target == REFERENCE_TARGET:
        yield None
        return
    with BackgroundServer(catalog_app(key, REFERENCE, target)) as server:
        yield server.base_url


def _json_file(path: Path) -> JsonValue:
    with contextlib.suppress(OSError, ValueError):
        found: JsonValue = json.loads(path.read_text(encoding="utf-8"))
        return found
    return None


def _json_lines(path: Path) -> Iterator[JsonObject]:
    for line in path.read_text(encoding="utf-8").splitlines():
        value: JsonValue = json.loads(line)
        if isinstance(value, dict):
            yield value


def _field(value: JsonValue, *names: str) -> JsonValue:
    for name in names:
        value = value.get(name) if isinstance(value, dict) else None
    return value


def assigned_ids(exchanges: Iterable[JsonObject]) -> frozenset[int]:
    """The ids of every animal the target created in the run (each 201's ``id``)."""
    found: set[int] = set()
    for exchange in exchanges:
        text = _field(exchange, "response", "content", "text")
        if _field(exchange, "response", "status") == 201 and isinstance(text, str):
            with contextlib.suppress(ValueError):
                value: JsonValue = json.loads(text)
                if isinstance(pet_id := _field(value, "id"), int) and not isinstance(pet_id, bool):
                    found.add(pet_id)
    return frozenset(found)


def request_line(exchange: JsonObject, tokens: Tokens) -> str:
    """One request as the suite sent it (method, path, query, the headers it chose, body), normalised."""
    url = urlsplit(str(_field(exchange, "request", "url") or ""))
    segments = ["<id>" if DECIMAL.fullmatch(s) and int(s) in tokens.assigned else s for s in url.path.split("/")]
    headers = _field(exchange, "request", "headers")
    chosen = sorted(
        f"{h.get('name')}: {h.get('value')}"
        for h in (headers if isinstance(headers, list) else [])
        if isinstance(h, dict) and str(h.get("name", "")).lower() not in TRANSPORT_HEADERS
    )
    body = _field(exchange, "request", "postData", "text")
    text = _ids_in_body(body, tokens.assigned) if isinstance(body, str) else "-"
    text = tokens.scrub(text)
    if len(text) > LONG_BODY:
        text = f"<{len(text)} characters, sha256 {hashlib.sha256(text.encode()).hexdigest()[:16]}>"
    line = [str(_field(exchange, "request", "method")), "/".join(segments), url.query, " | ".join(chosen), text]
    return tokens.scrub(json.dumps(line, ensure_ascii=False))


def _ids_in_body(body: str, assigned: frozenset[int]) -> str:
    return re.sub(
        r'("id"\s*:\s*)([0-9]{1,19})(?![0-9])', lambda m: m[1] + ("<id>" if int(m[2]) in assigned else m[2]), body
    )


def _report_lines(path: Path, tokens: Tokens) -> tuple[str, ...]:
    if not path.is_file():
        return ("<missing>",)
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.name == "summary.json" and isinstance(value := _json_file(path), dict):  # else compared as text
        value = {k: v for k, v in value.items() if k not in TIMING_KEYS}
        # scrubbed whole first: a header's name and value are two items of a list, a line each once indented
        with contextlib.suppress(ValueError):
            value = json.loads(tokens.scrub(json.dumps(value, sort_keys=True, ensure_ascii=False)))
        text = json.dumps(value, indent=1, sort_keys=True, ensure_ascii=False)
    elif path.name == "junit.xml":
        text = STATISTICS.sub(lambda m: m[1] + _statistics(m[2]) + m[3], text)
    return tuple(tokens.scrub(line) for line in text.splitlines())


def _statistics(encoded: str) -> str:
    """Hypothesis' statistics of one test, decoded, without the lines that time its phases."""
    text = base64.b64decode(encoded).decode("utf-8", "replace")
    return " / ".join(line.strip() for line in text.splitlines() if line.strip() and not TIMED_LINE.search(line))


def write(recording: Recording, folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / REQUESTS).write_text("".join(line + "\n" for line in recording.requests), encoding="utf-8")
    for name, lines in recording.reports:
        (folder / name).write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def read(folder: Path) -> dict[str, Recording]:
    """Every target recorded in ``folder`` (one sub-folder each)."""
    if not (folder / MANIFEST).is_file():
        raise UsageError(f"{folder} holds no recording (no {MANIFEST}): make one with `record {folder}`")
    found: dict[str, Recording] = {}
    for sub in sorted(p for p in folder.iterdir() if p.is_dir()):
        requests = _lines(sub / REQUESTS) if (sub / REQUESTS).is_file() else ()
        reports = tuple((name, _lines(sub / name)) for name in REPORTS)
        found[sub.name] = Recording(sub.name, requests, reports)
    return found


def _lines(path: Path) -> tuple[str, ...]:  # a report the run did not write is a difference, never an error
    # The table's scrubs again: a recording made before a scrub was added compares as one made after.
    text = path.read_text(encoding="utf-8") if path.is_file() else "<missing>"
    return tuple(AGAIN.scrub(text).splitlines())  # the whole text: a scrub may span lines (a header pair)


def differences(a: Recording, b: Recording, shown: int = SHOWN) -> list[str]:
    """What differs between two recordings of one target: requests missing or extra, then report lines."""
    lines: list[str] = []
    first, second = collections.Counter(a.requests), collections.Counter(b.requests)
    for word, only in (("missing", first - second), ("extra", second - first)):
        if only:
            lines.append(f"  requests {word} in B: {sum(only.values())}")
            lines += [f"    {n} x {line}" for line, n in sorted(only.items())[:shown]]
    for (name, old), (_, new) in zip(a.reports, b.reports, strict=True):
        diff = [d for d in difflib.unified_diff(old, new, "A/" + name, "B/" + name, n=0, lineterm="")]
        changed = [d for d in diff if d[:1] in "+-" and not d.startswith(("+++", "---"))]
        if changed:
            lines.append(f"  {name}: {len(changed)} lines differ")
            lines += [f"    {d[:300]}" for d in changed[:shown]]
    return lines


def compare(a: Path, b: Path, out: list[str]) -> int:
    first, second = read(a), read(b)
    status = 0
    for target in sorted(set(first) | set(second)):
        if target not in first or target not in second:
            out.append(f"{target}: recorded in {'B' if target in second else 'A'} only")
            status = 1
            continue
        found = differences(first[target], second[target])
        out += [f"{target}: same"] if not found else [f"{target}: differs", *found]
        status = status or int(bool(found))
    return status


def record(folder: Path, targets: Sequence[str], suite: Suite, seed: int, profile: str) -> list[str]:
    lines = []
    for target in targets:
        sub = folder / target
        sub.mkdir(exist_ok=True)
        recording = run_target(suite, target, seed, profile, sub)
        write(recording, sub)
        verdict = next((line for line in recording.reports[0][1] if '"verdict_line"' in line), "no summary.json")
        lines.append(f"{target}: {len(recording.requests)} requests, {verdict.strip()}")
    manifest = {"seed": seed, "profile": profile, "targets": list(targets), "pool_holds_the_suite": suite.local}
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return lines


def chosen_targets(faults: str | None) -> list[str]:
    names = [n.strip() for n in faults.split(",") if n.strip()] if faults is not None else list(DEFAULT_FAULTS)
    if unknown := [n for n in names if n not in FAULTS]:
        raise UsageError(f"unknown fault {', '.join(unknown)} (python -m devtools.catalog --list names them)")
    return [REFERENCE_TARGET, *names]


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="python -m devtools.samerun", description=__doc__.split("\n\n")[0])
    commands = top.add_subparsers(dest="command", required=True)
    rec = commands.add_parser("record", help="run the suite against the targets and keep what a user sees")
    rec.add_argument("folder", type=Path)
    rec.add_argument("--faults", help=f"faults of the catalog, comma-separated (default: {','.join(DEFAULT_FAULTS)})")
    where = rec.add_mutually_exclusive_group()
    where.add_argument(
        "--checkout", type=Path, default=ROOT, help="the suite to install from its wheel (default: this one)"
    )
    where.add_argument("--python", help="run the suite this interpreter has installed instead")
    rec.add_argument("--seed", type=int, default=SEED)
    rec.add_argument("--profile", default=PROFILE)
    cmp = commands.add_parser("compare", help="'same' per target, or its first differences (exit 1)")
    cmp.add_argument("a", type=Path)
    cmp.add_argument("b", type=Path)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    options = parser().parse_args(argv)
    out: list[str] = []
    try:
        if options.command == "compare":
            status = compare(options.a, options.b, out)
        else:
            targets = chosen_targets(options.faults)
            if options.folder.exists() and any(options.folder.iterdir()):  # no target of an older recording
                raise UsageError(f"{options.folder} is not empty: record into a new folder")
            options.folder.mkdir(parents=True, exist_ok=True)
            given = contextlib.nullcontext(suite_of(options.python)) if options.python else None
            with given or installed(options.checkout.resolve()) as suite:
                out = record(options.folder, targets, suite, options.seed, options.profile)
            status = 0
    except UsageError as problem:
        print(f"samerun: {problem}", file=sys.stderr)
        return 2
    print("\n".join(out))
    return status


if __name__ == "__main__":
    sys.exit(main())
