"""A certification bundle: its manifest, and ``petstore-contract verify DIR``.

A bundle is a directory that ``petstore-contract certify`` wrote: summary.json, report.html,
summary.md, junit.xml, exchanges.har and manifest.json.  The manifest holds the SHA-256 of every
other file and what the run was: product, suite version, spec SHA-256, seed, profile, target,
Python and platform, start and end.

``verify`` trusts nothing it has not recomputed.  In order, the first problem is one line (exit 1):

1. every file the manifest lists is there and has its SHA-256, and no other file is;
2. summary.json is a summary.json of this suite's schema, with no waivers (a certificate has none);
3. every clause row is consistent (a violated clause has findings, a conforming one has none, none
   is left not selected, the level is the registry's, every clause of the suite is there, finding
   ids in order);
4. the verdict, its reason, its exit code, its line and the clause counts are what the suite's own
   verdict rules (``verdict.decide``) give for those rows and the run's recorded problems;
5. the manifest says what summary.json says (suite version, spec, seed, verdict, times), so do
   report.html and junit.xml (the verdict line), and exchanges.har is HAR 1.2 with one entry per
   request the run counted.

manifest.json carries the SHA-256 of its own other fields too.  A bundle is not signed: whoever can
rewrite every file and every hash can forge one; what cannot be forged is a verdict its own
evidence does not support.

So an edited byte fails step 1, and an outcome edited with the hashes recomputed fails step 3 or 4.
"""

from __future__ import annotations

import hashlib
import json
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import markupsafe  # report.html's escaping (Jinja2's)

from petstore_contract.core import atomic
from petstore_contract.core.records import CONFORMS, NOT_SELECTED, VIOLATED, ClauseResult, RunResult
from petstore_contract.interface.clauses import CATCH_ALL, registry
from petstore_contract.interface.jsontypes import JsonObject, JsonValue
from petstore_contract.judging.verdict import decide
from petstore_contract.reporting import view
from petstore_contract.reporting.readback import SummaryError, clause_rows, json_list, json_object, json_text, load

BUNDLE_VERSION = 1
MANIFEST = "manifest.json"
SUMMARY = "summary.json"
HAR_FILE = "exchanges.har"
SELF_HASH = "manifest_sha256"
REQUIRED = (SUMMARY, "report.html", "junit.xml", HAR_FILE)
EXIT_VERIFIED, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2
# What the manifest repeats from summary.json (verify checks they agree).
REPEATED = ("suite_version", "spec_sha256", "seed", "profile", "started", "finished", "verdict")
# summary.json's top-level keys that are not the run's facts (``RunResult.to_dict``).
NOT_FACTS = frozenset(
    {"schema_version", "verdict", "reason", "exit_code", "tests", "warnings", "problems", "clauses"}
    | {"verdict_line", "clause_counts", "gate", "coverage"}
)


class BundleError(Exception):
    """The bundle does not verify; ``str()`` is one line naming the file and what is wrong."""


# -- writing ----------------------------------------------------------------------------------------


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as data:
        for block in iter(lambda: data.read(1 << 16), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True)
class FileHash:
    """What the manifest holds of one file of the bundle."""

    sha256: str
    bytes: int

    def to_dict(self) -> JsonObject:
        return {"sha256": self.sha256, "bytes": self.bytes}


def hashes(directory: Path) -> dict[str, FileHash]:
    """SHA-256 and size of every file of the bundle but the manifest."""
    return {
        path.name: FileHash(sha256(path), path.stat().st_size)
        for path in sorted(directory.iterdir())
        if path.is_file() and path.name != MANIFEST
    }


def manifest(directory: Path, summary: JsonObject, about: JsonObject) -> JsonObject:
    """The manifest of a bundle whose other files are written: ``about`` adds product, Python, platform..."""
    run = {name: summary.get(name) for name in REPEATED}
    target: JsonObject = {
        "name": summary.get("target"),
        "base_url": summary.get("base_url"),
        "key_env": summary.get("key_env"),
    }
    files: JsonObject = {name: entry.to_dict() for name, entry in hashes(directory).items()}
    return {"bundle_version": BUNDLE_VERSION, **about, **run, "target": target, "files": files}


def write_manifest(directory: Path, data: JsonObject, scrub: Callable[[str], str]) -> Path:
    """manifest.json, through the run's redaction (``scrub``) like every string the bundle holds, with the
    SHA-256 of its own other fields (the one file no other hash covers)."""
    clean: JsonObject = json.loads(scrub(json.dumps(data, ensure_ascii=False)))
    clean[SELF_HASH] = manifest_hash(clean)
    path = directory / MANIFEST
    return atomic.write_text(path, json.dumps(clean, indent=2, ensure_ascii=False) + "\n")


def manifest_hash(manifest: JsonObject) -> str:
    rest = {name: value for name, value in manifest.items() if name != SELF_HASH}
    canonical = json.dumps(rest, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def scrub_reports(directory: Path, scrub: Callable[[str], str]) -> list[str]:
    """The run's reports in the bundle passed once more through ``scrub`` (near misses of the key that
    a finding's request shows); the names of the files it changed."""
    changed = []
    for path in sorted(directory.iterdir()):
        if path.is_file() and path.name not in (MANIFEST, HAR_FILE):
            text = path.read_text(encoding="utf-8")
            clean = scrub(text)
            if clean != text:
                atomic.write_text(path, clean)
                changed.append(path.name)
    return changed


# -- verifying --------------------------------------------------------------------------------------


def verify(directory: Path) -> str:
    """The line a verified bundle prints ("verified: <verdict> ..."); BundleError names the first problem."""
    listed = _manifest(directory)
    _check_files(directory, listed)
    summary = _summary(directory / SUMMARY)
    rows = clause_rows(summary)
    _check_rows(rows)
    _check_verdict(summary, rows)
    _check_manifest(listed, summary)
    _check_reports(directory, summary)
    _check_har(directory / HAR_FILE, summary, listed)
    return f"verified: {summary['verdict']} ({summary['verdict_line']})"


def _manifest(directory: Path) -> JsonObject:
    path = directory / MANIFEST
    if not path.is_file():
        raise BundleError(f"{MANIFEST} is missing: not a bundle, or its manifest was removed")
    try:
        data: JsonValue = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise BundleError(f"{MANIFEST}: not JSON ({exc})") from None
    if (
        not isinstance(data, dict)
        or not isinstance(data.get("files"), dict)
        or data.get("bundle_version") != BUNDLE_VERSION
    ):
        raise BundleError(f"{MANIFEST}: not a manifest of bundle version {BUNDLE_VERSION}")
    if data.get(SELF_HASH) != manifest_hash(data):
        raise BundleError(f"{MANIFEST} was changed after the bundle was made (its {SELF_HASH} does not match)")
    return dict(data)


def _check_files(directory: Path, listed: JsonObject) -> None:
    files = json_object(listed["files"])  # an object: ``_manifest`` checked
    for name in REQUIRED:
        if name not in files:
            raise BundleError(f"{MANIFEST} does not list {name}")
    for name, entry in files.items():
        path = directory / name
        if "/" in name or "\\" in name or name in ("", ".", ".."):
            raise BundleError(f"{MANIFEST} lists {name!r}, which is not a file of the bundle")
        if not path.is_file():
            raise BundleError(f"{name} is missing (the manifest lists it)")
        if not isinstance(entry, dict) or sha256(path) != entry.get("sha256"):
            raise BundleError(f"{name} was changed after the bundle was made (its SHA-256 is not the manifest's)")
    extra = sorted(p.name for p in directory.iterdir() if p.name not in files and p.name != MANIFEST)
    if extra:
        raise BundleError(f"{extra[0]} is not in the manifest (added after the bundle was made)")


def _summary(path: Path) -> JsonObject:
    try:
        summary = load(path)
    except SummaryError as exc:
        raise BundleError(str(exc).replace(str(path), SUMMARY, 1)) from None
    if "gate" in summary:
        raise BundleError(f"{SUMMARY} carries waivers (gate): a certification run has none")
    return summary


# Rules every clause row of a real run keeps (verdict.clause_results): (broken?, what is wrong).
ROW_RULES: tuple[tuple[Callable[[ClauseResult], bool], str], ...] = (
    (lambda r: r.outcome == NOT_SELECTED, "a certification run selects every clause"),
    (lambda r: r.outcome == VIOLATED and not r.findings, "it has no finding"),
    (lambda r: r.outcome == CONFORMS and bool(r.findings), "it has findings"),
    (lambda r: r.outcome == CONFORMS and bool(r.notes), "it has the notes of an undecided clause"),
    (lambda r: r.outcome == CONFORMS and not r.tests, "it names no test"),
    (lambda r: any(f.clause != r.id for f in r.findings), "it holds a finding of another clause"),
)


def _check_rows(rows: list[ClauseResult]) -> None:
    clauses = registry()
    for row in rows:
        clause = clauses.get(row.id)
        if clause is None:
            raise BundleError(f"{SUMMARY}: clause {row.id} is not a clause of this suite")
        if row.level != clause.level:
            raise BundleError(f"{SUMMARY}: clause {row.id} says level {row.level}; the suite's is {clause.level}")
        for broken, what in ROW_RULES:
            if broken(row):
                raise BundleError(f"{SUMMARY}: clause {row.id} says {row.outcome}, but {what}")
    missing = sorted(set(clauses) - {r.id for r in rows} - {CATCH_ALL})
    if missing:
        raise BundleError(f"{SUMMARY}: clause {missing[0]} is missing")


def _check_verdict(summary: JsonObject, rows: list[ClauseResult]) -> None:
    """The verdict again, by the suite's own rules, from the rows and the run's recorded problems."""
    facts = {name: value for name, value in summary.items() if name not in NOT_FACTS}
    problems = [json_text(problem) for problem in json_list(summary["problems"])]  # strings: the schema's
    result = decide(rows, facts=facts, problems=problems, records=[], warnings=[])
    counts: JsonObject = {outcome: count for outcome, count in view.outcome_counts(result).items()}
    recomputed: JsonObject = {
        "verdict": str(result.verdict),  # the enums' words, as the file holds them (and as a message says them)
        "reason": str(result.reason),
        "exit_code": result.exit_code,
        "verdict_line": view.verdict_line(result),
        "clause_counts": counts,
    }
    for name, value in recomputed.items():
        if summary[name] != value:
            raise BundleError(f"{SUMMARY}: its {name} is {summary[name]!r}, its clauses give {value!r}")
    _check_finding_ids(summary, result)


def _check_finding_ids(summary: JsonObject, result: RunResult) -> None:
    for entry, row in zip(json_list(summary["clauses"]), result.clauses, strict=True):
        listed = json_list(json_object(entry).get("findings"))
        for finding, (fid, _) in zip(map(json_object, listed), row.numbered(), strict=True):
            if finding.get("id") != fid:
                raise BundleError(f"{SUMMARY}: finding {finding.get('id')!r} should be {fid!r}")


def _check_manifest(listed: JsonObject, summary: JsonObject) -> None:
    for name in REPEATED:
        if listed.get(name) != summary.get(name):
            raise BundleError(f"{MANIFEST} says {name} {listed.get(name)!r}; {SUMMARY} says {summary.get(name)!r}")


def _check_reports(directory: Path, summary: JsonObject) -> None:
    """report.html and junit.xml tell the verdict summary.json tells."""
    line = summary["verdict_line"]
    page = (directory / "report.html").read_bytes().decode("utf-8", "replace")
    if str(markupsafe.escape(line)) not in page:
        raise BundleError(f"report.html does not say {SUMMARY}'s verdict line ({line})")
    try:
        root = ET.parse(directory / "junit.xml").getroot()
    except ET.ParseError as exc:
        raise BundleError(f"junit.xml: not XML ({exc})") from None
    said = {
        p.get("name"): p.get("value") for p in root.iter("property") if p.get("name") in ("verdict", "verdict_line")
    }
    if said != {"verdict": summary["verdict"], "verdict_line": line}:
        raise BundleError(f"junit.xml says verdict {said.get('verdict')!r}; {SUMMARY} says {summary['verdict']!r}")


def _check_har(path: Path, summary: JsonObject, listed: JsonObject) -> None:
    try:
        har = json.loads(path.read_text(encoding="utf-8"))
        entries = har["log"]["entries"]
        version = har["log"]["version"]
    except (ValueError, UnicodeDecodeError, KeyError, TypeError):
        raise BundleError(f"{HAR_FILE}: not a HAR file") from None
    if version != "1.2" or not isinstance(entries, list):
        raise BundleError(f"{HAR_FILE}: not HAR 1.2")
    if len(entries) != summary.get("requests") or len(entries) != listed.get("exchanges"):
        counts = f"{len(entries)} entries; the run counted {summary.get('requests')} requests"
        raise BundleError(f"{HAR_FILE}: {counts}, the manifest {listed.get('exchanges')}")


# -- the command ------------------------------------------------------------------------------------


VERIFY_HELP = """usage: petstore-contract verify DIR

Checks a certification bundle (petstore-contract certify --out DIR): every file against the manifest's
hashes, the exchanges against the run's counts, and the verdict recomputed from the clauses.
Exit 0: verified; 1: not verified (one line says why); 2: no such directory or a bad command line."""


def main(argv: list[str]) -> int:
    """``petstore-contract verify DIR``."""
    if argv in (["--help"], ["-h"]):
        print(VERIFY_HELP)
        return 0
    if len(argv) != 1 or argv[0].startswith("-"):
        print("petstore-contract verify: usage: petstore-contract verify DIR", file=sys.stderr)
        return EXIT_BAD_INPUT
    directory = Path(argv[0])
    if not directory.is_dir():
        print(f"petstore-contract verify: {directory}: no such directory", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        line = verify(directory)
    except BundleError as exc:
        print(f"not verified: {directory}: {exc}")
        return EXIT_FAILED
    print(line)
    return EXIT_VERIFIED
