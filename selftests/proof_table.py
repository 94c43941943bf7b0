"""The self-proof's figures as data, one table and one JSON file (with the commit they were measured on).

A run of the self-tests prints the table at its end: tier 2 (``python -m devtools.selfproof``) over every
catalog scenario and the whole mutation sample, tier 1 over its slice.  The figures come from the
catalogs' runs and the mutation sample's closing lines, never from a file kept by hand.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from blind_scores import ROUNDS, BlindScenario
from blind_scores import caught as blind_caught
from blind_scores import passed as blind_passed
from devtools.killmatrix import EMPTY, Scenario, acceptable, collateral
from devtools.launcher import SuiteRun
from devtools.undecided import unexplained

# The mutation sample's figures, stashed by its test in the process that ran it.
MUTATION_KEY = pytest.StashKey[dict[str, Any]]()
# The mutation tool's closing lines the table keeps (``devtools/mutation/mutate.py``).
MUTATION_LINES = ("run", "killed", "survived", "inconclusive/timeout", "mutation score")


def _ratio(good: int, total: int) -> list[int]:
    return [good, total]


def kill_matrix_figures(results: dict[Scenario, SuiteRun]) -> dict[str, Any]:
    def score(kind: str) -> list[int]:
        chosen = [(s, r) for s, r in results.items() if s.kind == kind]
        return _ratio(sum(acceptable(s, r) for s, r in chosen), len(chosen))

    extra = sum(len(collateral(s, r)) for s, r in results.items() if s.kind == "fault")
    return {
        "faults caught": score("fault"),
        "compliant servers passed": score("variant"),
        "unjudgeable targets inconclusive": score("unjudgeable"),
        "collateral clauses": extra,
        "faults leaving another clause undecided, unexplained (empty store)": _ratio(
            len(one_fault_left(results)), len(empty_faults(results))
        ),
    }


def empty_faults(results: dict[Scenario, SuiteRun]) -> dict[Scenario, SuiteRun]:
    """The faults' runs on the empty store: the kill matrix's runs are the ones ``devtools.undecided`` makes."""
    return {s: r for s, r in results.items() if s.kind == "fault" and s.store == EMPTY}


def one_fault_left(results: dict[Scenario, SuiteRun]) -> list[str]:
    """Issue 58's "one fault, one clause": the faults that leave a clause undecided beside the violated ones
    that no exception, store size or comparison explains (``devtools.undecided.unexplained``)."""
    return sorted(s.name for s, r in empty_faults(results).items() if unexplained(s.name, r))


def blind_figures(results: dict[BlindScenario, SuiteRun]) -> dict[str, Any]:
    rounds: dict[str, Any] = {}
    for round_ in ROUNDS:
        faults = [r for s, r in results.items() if s.round == round_ and s.kind == "fault"]
        compliant = [r for s, r in results.items() if s.round == round_ and s.kind == "compliant"]
        if faults or compliant:
            rounds[round_] = {
                "faults caught": _ratio(sum(map(blind_caught, faults)), len(faults)),
                "compliant servers passed": _ratio(sum(map(blind_passed, compliant)), len(compliant)),
            }
    return rounds


def mutation_figures(stdout: str, exit_code: int, sample: int) -> dict[str, Any]:
    lines = dict(line.split(": ", 1) for line in stdout.splitlines() if ": " in line and line[0].islower())
    return {"sample": sample, "passed": exit_code == 0, **{k: lines[k] for k in MUTATION_LINES if k in lines}}


def commit(root: Path) -> str:
    """The commit the figures were measured on, with ``+changes`` when the checkout differs from it."""
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=30)
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    sha = head.stdout.strip() or "unknown"
    return sha + ("+changes" if dirty.stdout.strip() else "")


def _cell(value: Any) -> str:
    return f"{value[0]}/{value[1]}" if isinstance(value, list) else str(value)


def table(figures: dict[str, Any]) -> str:
    """The figures as one Markdown table: part, what was counted, the figure."""
    rows = ["| part | figure | value |", "|---|---|---|"]
    for name, value in figures.get("kill matrix", {}).items():
        rows.append(f"| kill matrix | {name} | {_cell(value)} |")
    for round_, counted in figures.get("blind rounds", {}).items():
        rows += [f"| blind round `{round_}` | {name} | {_cell(value)} |" for name, value in counted.items()]
    mutation = figures.get("mutation sample")
    if mutation:
        rows.append(f"| mutation sample | verdict | {'passed' if mutation['passed'] else '**failed**'} |")
        rows += [f"| mutation sample | {k} | {mutation[k]} |" for k in ("sample", *MUTATION_LINES) if k in mutation]
    header = f"self-proof, tier {figures['tier']} ({figures['scope']}), commit {figures['commit']}"
    return header + "\n\n" + "\n".join(rows)
