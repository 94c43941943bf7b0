"""One fault, one clause, the rest decided: per fault of the catalog, the clauses left undecided beside
the violated ones.

A fault of ``catalog/faults.toml`` breaks one sentence of the document; every other clause should still
be judged (set-up takes what the answers show wherever the document leaves no doubt).  This runs the
chosen faults as the kill matrix does (``killmatrix.run_scenario``: the quick profile, an empty store
unless ``--crowded``) and prints, per fault, its clause, the violated clauses and each undecided clause
with the kinds of its notes (``precondition``, ``empty_store``, ...) from ``summary.json``; the last line
counts the faults with an undecided clause outside the exceptions ``docs/judging-rules.md`` lists
(``EXCEPTIONS``)::

    python -m devtools.undecided create_returns_200 read_missing_deprecation
    python -m devtools.undecided --prefix create_ --prefix auth_ --parallel 2
    python -m devtools.undecided --all
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from devtools.catalog import FAULTS
from devtools.killmatrix import CROWDED, EMPTY, Scenario, acceptable, run_catalog
from devtools.launcher import SuiteRun
from petstore_contract.core.records import STORE_TOO_LARGE
from petstore_contract.interface.clauses import CLAUSE_IDS, registry

# Clauses a fault may leave undecided beside its own, each with its reason (docs/judging-rules.md,
# "One fault, one clause"): (fault, clause) -> why no client can decide the clause on that server.
NO_BEARER = (
    "no 401 of the run carries a Bearer challenge, so the SHOULD about a Bearer challenge's error= parameter has "
    "no challenge to read (a SHOULD: it never changes the verdict)"
)
NO_SOLD = "the service refuses every valid NewPet whose status is sold: the suite can make no sold animal"
EXCEPTIONS: dict[tuple[str, str], str] = {
    ("auth_no_challenge", CLAUSE_IDS.auth_challenge_quiet): NO_BEARER,
    ("auth_basic_challenge", CLAUSE_IDS.auth_challenge_quiet): NO_BEARER,
    ("create_rejects_sold", CLAUSE_IDS.create_echo): NO_SOLD + ", so no answer echoes a sold animal's fields",
    ("create_rejects_sold", CLAUSE_IDS.list_status_found): NO_SOLD
    + ", so it has no sold animal to look for on the sold page",
}


@dataclass(frozen=True)
class Undecided:
    """One clause a run left undecided."""

    clause: str
    kinds: tuple[str, ...]  # the kinds of its notes
    reason: str  # its first note's reason


def undecided_beside(run: SuiteRun) -> list[Undecided]:
    """Every undecided clause of a run, with the kinds of its notes and its first reason."""
    found = []
    for clause in run.summary.get("clauses", ()):
        if clause.get("outcome") != "undecided":
            continue
        notes = clause.get("notes") or [{}]
        kinds = tuple(dict.fromkeys(str(note.get("kind", "")) for note in notes))
        found.append(Undecided(str(clause["id"]), kinds, str(notes[0].get("reason", ""))))
    return found


def unexplained(fault: str, run: SuiteRun) -> list[Undecided]:
    """The undecided clauses of ``fault``'s run that no exception explains; a store too large to see whole
    explains those the registry lets it (``undecided-ok``: named in the verdict line, never blocking)."""
    clauses = registry()
    return [
        u
        for u in undecided_beside(run)
        if (fault, u.clause) not in EXCEPTIONS
        and not (u.kinds == (STORE_TOO_LARGE,) and STORE_TOO_LARGE in clauses[u.clause].undecided_ok)
    ]


def render(results: dict[Scenario, SuiteRun]) -> str:
    lines = [
        "| fault | clause | verdict | violated | undecided beside them | kill matrix |",
        "|---|---|---|---|---|---|",
    ]
    for scenario, run in sorted(results.items(), key=lambda item: (item[0].name, item[0].store)):
        fault = FAULTS[scenario.name]
        undecided = [
            f"{u.clause} ({', '.join(u.kinds)}{'; excepted' if (scenario.name, u.clause) in EXCEPTIONS else ''})"
            for u in undecided_beside(run)
        ]
        lines.append(
            f"| `{scenario.label}` | {fault.clause} | {run.verdict} | {', '.join(sorted(run.violated())) or '-'} | "
            f"{'; '.join(undecided) or '-'} | {'caught' if acceptable(scenario, run) else '**NOT CAUGHT**'} |"
        )
    left = sorted(s.label for s, r in results.items() if unexplained(s.name, r))
    missed = sum(not acceptable(s, r) for s, r in results.items())
    lines += ["", f"faults with an undecided clause beside the violated ones: {len(left)}/{len(results)}"]
    lines += [f"faults the kill matrix does not accept (not caught on their clause, or collateral): {missed}"]
    lines += [f"  {label}" for label in left]
    return "\n".join(lines)


def chosen(names: Sequence[str], prefixes: Sequence[str], every: bool) -> list[str]:
    if every:
        return list(FAULTS)
    unknown = [name for name in names if name not in FAULTS]
    if unknown:
        raise SystemExit(f"devtools.undecided: no fault named {', '.join(unknown)} in devtools/catalog/faults.toml")
    return [*names, *(name for name in FAULTS if name.startswith(tuple(prefixes)) and name not in names)]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m devtools.undecided", description=__doc__.splitlines()[0])
    parser.add_argument("faults", nargs="*", help="faults of devtools/catalog/faults.toml")
    parser.add_argument("--prefix", action="append", default=[], help="every fault whose name starts so")
    parser.add_argument("--all", action="store_true", help="every fault of the catalog")
    parser.add_argument("--crowded", action="store_true", help="on the crowded store (default: an empty one)")
    parser.add_argument("--parallel", type=int, default=2, help="scenarios at a time (default 2)")
    options = parser.parse_args(argv)
    names = chosen(options.faults, options.prefix, options.all)
    if not names:
        parser.error("name a fault, a --prefix or --all")
    store = CROWDED if options.crowded else EMPTY
    results = run_catalog([Scenario("fault", name, store) for name in names], parallel=options.parallel)
    print(render(results))
    return 1 if any(unexplained(s.name, r) for s, r in results.items()) else 0


if __name__ == "__main__":
    sys.exit(main())
