"""``petstore-contract compare BASE.json NEW.json``: what changed between two runs, clause by clause.

Each clause of either run is one of:

- *regressed*: violated in NEW, and either not violated in BASE or violated with a finding signature
  BASE did not have (``Finding.signature``: operation, clause, expectation; never the observed text);
- *fixed*: violated in BASE, conforms in NEW;
- *newly undecided*: decided in BASE (conforms or violated), undecided in NEW;
- *unchanged*: the same outcome (a violated clause with no new signature);
- *changed*: any other move (undecided -> conforms, a clause one of the runs did not select).

Exit 0 when no MUST clause regressed, 1 when one did (a SHOULD clause that regressed is listed as a
warning), 2 with one line for a file that cannot be read as a summary.json of this suite's version.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NoReturn

from petstore_contract.core import atomic
from petstore_contract.core.records import CONFORMS, NOT_SELECTED, UNDECIDED, VIOLATED, Signature
from petstore_contract.interface.jsontypes import JsonObject, JsonValue
from petstore_contract.reporting.markdown import code, text
from petstore_contract.reporting.readback import SummaryError, json_list, json_object, json_text, load

REGRESSED, FIXED, NEWLY_UNDECIDED, UNCHANGED, CHANGED = "regressed", "fixed", "newly_undecided", "unchanged", "changed"
ORDER = (REGRESSED, FIXED, NEWLY_UNDECIDED, CHANGED, UNCHANGED)
HEADINGS = {
    REGRESSED: "Regressed",
    FIXED: "Fixed",
    NEWLY_UNDECIDED: "Newly undecided",
    CHANGED: "Changed",
    UNCHANGED: "Unchanged",
}
ABSENT = NOT_SELECTED  # a clause one file does not list (another suite version) counts as not selected
DECIDED = (CONFORMS, VIOLATED)
EXIT_OK, EXIT_REGRESSED, EXIT_BAD_INPUT = 0, 1, 2
STEP_SUMMARY = "GITHUB_STEP_SUMMARY"
SHOWN = 10  # signatures listed per clause in Markdown
# What the comparison repeats of each run's summary.json: the run's identity.
IDENTITY = ("target", "base_url", "mode", "profile", "seed", "started", "verdict", "verdict_line", "suite_version")


@dataclass
class ClauseChange:
    clause: str
    level: str
    change: str
    base: str
    new: str
    new_signatures: list[Signature] = field(default_factory=list)  # in NEW, not in BASE
    gone_signatures: list[Signature] = field(default_factory=list)  # in BASE, not in NEW

    def to_dict(self) -> JsonObject:
        data: JsonObject = {"clause": self.clause, "level": self.level, "change": self.change}
        data |= {"base": self.base, "new": self.new}
        data["new_signatures"] = [dict(s.to_dict()) for s in self.new_signatures]
        data["gone_signatures"] = [dict(s.to_dict()) for s in self.gone_signatures]
        return data


@dataclass(frozen=True)
class RunIdentity:
    """A compared run: its file, then its summary.json's values of ``IDENTITY`` (None where it has none)."""

    file: str
    values: tuple[JsonValue, ...]

    @classmethod
    def of(cls, data: JsonObject, file: str) -> RunIdentity:
        return cls(file, tuple(data.get(key) for key in IDENTITY))

    def get(self, key: str) -> JsonValue:
        return self.values[IDENTITY.index(key)]

    def to_dict(self) -> JsonObject:
        return {"file": self.file} | dict(zip(IDENTITY, self.values, strict=True))


@dataclass
class Comparison:
    base: RunIdentity
    new: RunIdentity
    clauses: list[ClauseChange]

    def of(self, change: str) -> list[ClauseChange]:
        return [c for c in self.clauses if c.change == change]

    @property
    def blocking(self) -> list[ClauseChange]:
        return [c for c in self.of(REGRESSED) if c.level == "MUST"]

    @property
    def exit_code(self) -> int:
        return EXIT_REGRESSED if self.blocking else EXIT_OK

    def headline(self) -> str:
        counts = ", ".join(f"{len(self.of(kind))} {HEADINGS[kind].lower()}" for kind in ORDER)
        blocking = self.blocking
        if blocking:
            ids = ", ".join(c.clause for c in blocking[:5]) + (" ..." if len(blocking) > 5 else "")
            clauses = "clause" if len(blocking) == 1 else "clauses"
            return f"Regression: {len(blocking)} MUST {clauses} regressed ({ids}); {counts}"
        return f"No regression: {counts}"

    def to_dict(self) -> JsonObject:
        data: JsonObject = {"exit_code": self.exit_code, "headline": self.headline()}
        data |= {"base": self.base.to_dict(), "new": self.new.to_dict()}
        data |= {kind: [c.to_dict() for c in self.of(kind)] for kind in ORDER}
        return data


# -- the comparison ---------------------------------------------------------------------------------


def classify(base: str, new: str, added: bool) -> str:
    """The change of one clause: outcomes in BASE and NEW, and whether NEW has a signature BASE had not."""
    if new == VIOLATED and (base != VIOLATED or added):
        return REGRESSED
    if base == VIOLATED and new == CONFORMS:
        return FIXED
    if base in DECIDED and new == UNDECIDED:
        return NEWLY_UNDECIDED
    return UNCHANGED if base == new else CHANGED


def compare(base: JsonObject, new: JsonObject, names: tuple[str, str] = ("BASE", "NEW")) -> Comparison:
    before, after = _clauses(base), _clauses(new)
    changes = []
    for cid in list(dict.fromkeys([*before, *after])):
        old_entry, new_entry = before.get(cid), after.get(cid)
        old_sigs, new_sigs = _signatures(old_entry), _signatures(new_entry)
        old_outcome = json_text(old_entry["outcome"]) if old_entry else ABSENT
        new_outcome = json_text(new_entry["outcome"]) if new_entry else ABSENT
        added = [s for key, s in new_sigs.items() if key not in old_sigs]
        gone = [s for key, s in old_sigs.items() if key not in new_sigs]
        level = json_text((new_entry or old_entry or {}).get("level", "MUST"))
        change = classify(old_outcome, new_outcome, bool(added))
        changes.append(ClauseChange(cid, level, change, old_outcome, new_outcome, added, gone))
    return Comparison(RunIdentity.of(base, names[0]), RunIdentity.of(new, names[1]), changes)


def _clauses(data: JsonObject) -> dict[str, JsonObject]:
    entries = map(json_object, json_list(data["clauses"]))
    return {json_text(entry["id"]): entry for entry in entries}


def _signatures(entry: JsonObject | None) -> dict[Signature, Signature]:
    """The distinct signatures of a clause's findings, in the order first seen."""
    if entry is None or entry["outcome"] != VIOLATED:
        return {}
    found: dict[Signature, Signature] = {}
    for finding in json_list(entry["findings"]):
        signature = json_object(json_object(finding)["signature"])
        parts = (json_text(signature["operation"]), json_text(signature["clause"]), json_text(signature["expectation"]))
        found.setdefault(Signature(*parts), Signature(*parts))
    return found


# -- renderings -------------------------------------------------------------------------------------


def render_json(comparison: Comparison) -> str:
    return json.dumps(comparison.to_dict(), indent=2, ensure_ascii=False) + "\n"


def render_markdown(comparison: Comparison) -> str:
    icon = "❌" if comparison.blocking else "✅"
    lines = [f"## {icon} Pet Store contract: compare", "", f"**{text(comparison.headline(), 1_000)}**", ""]
    lines += ["| | file | target | mode | started | verdict |", "|---|---|---|---|---|---|"]
    for label, run in (("base", comparison.base), ("new", comparison.new)):
        cells = [
            run.file,
            f"{run.get('target') or ''} {run.get('base_url') or ''}",
            run.get("mode"),
            run.get("started"),
        ]
        lines.append(
            f"| {label} | " + " | ".join(code(str(c or "-"), 120) for c in cells) + f" | {run.get('verdict')} |"
        )
    lines.append("")
    for kind in ORDER[:-1]:
        changes = comparison.of(kind)
        if changes:
            lines += [f"### {HEADINGS[kind]} ({len(changes)})", "", "| clause | level | base | new | signatures |"]
            lines += ["|---|---|---|---|---|", *(_row(c) for c in changes), ""]
    unchanged = comparison.of(UNCHANGED)
    if unchanged:
        listed = ", ".join(code(c.clause) for c in unchanged)
        lines += [f"### Unchanged ({len(unchanged)})", "", listed, ""]
    return "\n".join(lines)


def _row(change: ClauseChange) -> str:
    parts = [f"new: {_sig(s)}" for s in change.new_signatures[:SHOWN]]
    parts += [f"gone: {_sig(s)}" for s in change.gone_signatures[:SHOWN]]
    hidden = max(0, len(change.new_signatures) - SHOWN) + max(0, len(change.gone_signatures) - SHOWN)
    parts += [f"and {hidden} more"] if hidden else []
    level = change.level if change.level == "MUST" else f"{change.level} (warning)"
    cells = [code(change.clause), level, change.base, change.new, "<br>".join(parts) or "-"]
    return "| " + " | ".join(cells) + " |"


def _sig(signature: Signature) -> str:
    return code(f"{signature.operation or '-'} · {signature.expectation}", 160)


RENDERERS: dict[str, Callable[[Comparison], str]] = {"markdown": render_markdown, "json": render_json}


# -- the command ------------------------------------------------------------------------------------


class _OneLineParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_BAD_INPUT, f"petstore-contract compare: {message}\n")


def parse(argv: list[str]) -> argparse.Namespace:
    parser = _OneLineParser(prog="petstore-contract compare", description="Compare two runs' summary.json.")
    parser.add_argument("base", metavar="BASE.json", help="the run to compare against (e.g. Production)")
    parser.add_argument("new", metavar="NEW.json", help="the run that may have regressed (e.g. Staging)")
    parser.add_argument("--format", choices=sorted(RENDERERS), default="markdown", help="markdown (default) or json")
    parser.add_argument("--out", metavar="FILE", help="write the comparison to FILE (default: standard output)")
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    args = parse(argv)
    try:
        comparison = compare(load(args.base), load(args.new), (args.base, args.new))
    except SummaryError as exc:
        print(f"petstore-contract compare: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    rendered = RENDERERS[args.format](comparison)
    try:
        _write(rendered, args.out, args.format)
    except OSError as exc:
        print(f"petstore-contract compare: cannot write {args.out}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.out:
        print(comparison.headline())
    return comparison.exit_code


def _write(rendered: str, out: str | None, fmt: str) -> None:
    if out:
        atomic.write_text(out, rendered)
    else:
        sys.stdout.write(rendered)
    step_summary = os.environ.get(STEP_SUMMARY)
    if step_summary and fmt == "markdown":  # as the suite does with summary.md: the CI job summary
        with open(step_summary, "a", encoding="utf-8") as summary:
            summary.write(rendered + "\n")
