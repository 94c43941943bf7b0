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
from typing import Any

from devtools.catalog import FAULTS
from devtools.killmatrix import CROWDED, EMPTY, Scenario, acceptable, run_catalog
from devtools.launcher import SuiteRun
from petstore_contract.core.records import DEPLOYMENT, STORE_TOO_LARGE
from petstore_contract.interface.clauses import CLAUSE_IDS, registry

# Clauses a fault may leave undecided beside its own, each with its reason (docs/judging-rules.md,
# "One fault, one clause"): (fault, clause) -> why no client can decide the clause on that server.
NO_BEARER = (
    "no 401 of the run carries a Bearer challenge, so the SHOULD about a Bearer challenge's error= parameter has "
    "no challenge to read (a SHOULD: it never changes the verdict)"
)
NO_SOLD = "the service refuses every valid NewPet whose status is sold: the suite can make no sold animal"
NO_READ_200 = (
    "GET /pets/{petId} answers no read of the suite's animals with 200 (read.found's violation), and §4.3 asks "
    "the Deprecation header of its 200 answers: there is none to read it on"
)
EXCEPTIONS: dict[tuple[str, str], str] = {
    ("auth_no_challenge", CLAUSE_IDS.auth_challenge_quiet): NO_BEARER,
    ("auth_basic_challenge", CLAUSE_IDS.auth_challenge_quiet): NO_BEARER,
    ("create_rejects_sold", CLAUSE_IDS.create_echo): NO_SOLD + ", so no answer echoes a sold animal's fields",
    ("create_rejects_sold", CLAUSE_IDS.list_status_found): NO_SOLD
    + ", so it has no sold animal to look for on the sold page",
    ("auth_read_rejects_valid_key", CLAUSE_IDS.read_deprecation): NO_READ_200
    + " (every read with the valid key is refused)",
    ("read_forgets_pets", CLAUSE_IDS.read_deprecation): NO_READ_200 + " (every read of an animal created answers 404)",
    ("auth_missing_403", CLAUSE_IDS.auth_challenge_quiet): (
        "the service answers every request without credentials 403: no 401 to a request without credentials "
        "carries a challenge, so the SHOULD about its error= parameter has none to read (a SHOULD: it never "
        "changes the verdict)"
    ),
}
# A list that is no JSON array has no length and no items; ids that name no animal (a string is no int64)
# leave no item to match with an animal; statuses that are no PetStatus leave none to compare with a filter.
NO_ARRAY = "the service answers every GET /pets with a JSON object, no array: no page has a length or items to read"
NO_ID = "every listed item's id is a string, no int64 (§2): no item names an animal, so which animals a page lists"
NO_STATUS = "every listed item's status is upper-cased, no PetStatus (§2): no item shows a status to compare"
EXCEPTIONS |= {
    ("list_wraps_array", clause): NO_ARRAY
    for clause in (
        CLAUSE_IDS.list_limit_honoured,
        CLAUSE_IDS.list_limit_fills,
        CLAUSE_IDS.list_limit_default,
        CLAUSE_IDS.list_limit_maximum,
        CLAUSE_IDS.list_page_distinct,
        CLAUSE_IDS.list_item_same,
        CLAUSE_IDS.list_status_filter,
        CLAUSE_IDS.list_status_found,
        CLAUSE_IDS.list_found,
        CLAUSE_IDS.create_reject_nothing_created,
    )
}
EXCEPTIONS |= {
    ("list_item_id_string", clause): f"{NO_ID} is not shown"
    for clause in (
        CLAUSE_IDS.list_item_same,
        CLAUSE_IDS.list_status_found,
        CLAUSE_IDS.list_found,
    )
}
NO_INT64 = "every id the service hands out is above 2^63-1, no int64 (§2): no listed item names an animal, so"
EXCEPTIONS |= {
    ("create_id_beyond_int64", CLAUSE_IDS.list_item_same): f"{NO_INT64} none can be read alone to compare",
    (
        "create_id_beyond_int64",
        CLAUSE_IDS.list_status_found,
    ): f"{NO_INT64} which animals a status page lists is not shown",
    ("create_id_beyond_int64", CLAUSE_IDS.list_found): NO_INT64.replace(
        ", so", ": no create answer is a Pet to look for"
    ),
    ("create_id_reused", CLAUSE_IDS.list_limit_maximum): (
        "the service hands out ids it handed out before: the store shows no 101 distinct animals, so no page could "
        "exceed 100"
    ),
    ("create_ignores_status", CLAUSE_IDS.list_status_found): (
        "the service stores every animal sent with a status as available: the suite can make no pending or sold "
        "animal to look for on those pages"
    ),
}
EXCEPTIONS[("list_item_status_uppercase", CLAUSE_IDS.list_status_filter)] = f"{NO_STATUS} with the filter's"
# limit=100 refused (list.limit.accepted): the only page that could show more than 100 animals is never given,
# and every smaller page shows fewer animals than the store holds (paging beyond a limit is not shown, §4.4).
NO_100 = "the service refuses limit=100 (§4.1 allows 1 to 100): "
EXCEPTIONS |= {
    ("list_rejects_limit_100", CLAUSE_IDS.list_limit_maximum): NO_100 + "no page it gives could exceed 100",
    ("list_rejects_limit_100", CLAUSE_IDS.list_status_found): NO_100
    + "no status page it gives shows every animal of that status (the suite holds more than a smaller page)",
    ("list_rejects_limit_100", CLAUSE_IDS.list_found): NO_100
    + "no page it gives shows every animal the suite created (more than a smaller page holds)",
    ("list_rejects_limit_100", CLAUSE_IDS.create_reject_nothing_created): NO_100
    + "the store is seen whole on a page of 100 alone (a shorter page may be the page cap), so no look shows "
    "whether a refused create added an animal",
}
EXCEPTIONS[("create_ids_repeat_after_100", CLAUSE_IDS.list_limit_maximum)] = (
    "after 100 animals the service hands out the first ids again: the store shows no 101 distinct animals, so no "
    "page could exceed 100"
)


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
    explains those the registry lets it (``undecided-ok``: named in the verdict line, never blocking), an
    intermittent fault's 5xx its own clause (``deployment_only``), and a violated clause the registry says it
    compares with (``blocked-by``, ``blocked_by_comparison``)."""
    clauses = registry()
    return [
        u
        for u in undecided_beside(run)
        if (fault, u.clause) not in EXCEPTIONS
        and not (u.kinds == (STORE_TOO_LARGE,) and STORE_TOO_LARGE in clauses[u.clause].undecided_ok)
        and not deployment_only(fault, u)
        and not blocked_by_comparison(u.clause, run)
    ]


def deployment_only(fault: str, u: Undecided) -> bool:
    """An intermittent fault's own clause, undecided for the deployment alone: a 5xx without the document's
    Error body, not given again when asked again (RFC 9110 §9.2.2), is a gateway's or a drained instance's to
    any client as readily as the service's (``judging/flicker.py``), so no client can pin it on the service;
    the run is inconclusive, naming it, which is how the kill matrix catches such a fault
    (``killmatrix.caught``)."""
    return FAULTS[fault].intermittent and u.clause == FAULTS[fault].clause and u.kinds == (DEPLOYMENT,)


def blocked_by_comparison(clause: str, run: SuiteRun, seen: frozenset[str] = frozenset()) -> bool:
    """Every note of ``clause`` names as its blocker a clause the registry says it compares with (``blocked-by``:
    a list compared with reads shown wrong, a store compared with ids handed out twice) that is violated, or is
    itself so blocked (reads blocked by ids handed out twice): which of the answers is wrong no client can
    tell, and the blocker carries the violation."""
    row: dict[str, Any] = next((c for c in run.summary.get("clauses", ()) if c.get("id") == clause), {})
    if row.get("outcome") != "undecided":
        return False
    blockers = {str(note.get("blocked_by", "")) for note in row.get("notes") or [{}]}
    compared = set(registry()[clause].blocked_by)
    return blockers <= compared and all(
        b in run.violated() or (b not in seen and blocked_by_comparison(b, run, seen | {clause})) for b in blockers
    )


def render(results: dict[Scenario, SuiteRun]) -> str:
    lines = [
        "| fault | clause | verdict | violated | undecided beside them | kill matrix |",
        "|---|---|---|---|---|---|",
    ]
    for scenario, run in sorted(results.items(), key=lambda item: (item[0].name, item[0].store)):
        fault = FAULTS[scenario.name]
        undecided = [
            f"{u.clause} ({', '.join(u.kinds)}{'; excepted' if _excepted(scenario.name, u) else ''})"
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


def _excepted(fault: str, u: Undecided) -> bool:
    return (fault, u.clause) in EXCEPTIONS or deployment_only(fault, u)


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
