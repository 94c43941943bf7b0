"""The blind catalog's score: every compliant server passes; every fault is caught or is a known miss.

The servers of ``selftests/blind`` and ``blind2`` were written from the interface document alone, by
someone who had not read the suite; they measure what the suite's own catalog cannot (its authors' blind
spots).  ``blind3`` holds compliant servers on real frameworks, with each framework's own answers where
the document is silent (its README says how it was written); ``blind4`` Pet Stores in Go, PHP, Ruby and
Perl, compliant and faulty, each fault hiding in its language's defaults.  Known misses are listed in
``blind_misses.toml`` with the reason; a miss not listed fails, and so does a listed miss the suite now
catches (the list stays honest).
"""

from __future__ import annotations

import os

import pytest

from blind_scores import ROUNDS, UNAVAILABLE, BlindScenario, caught, known_misses, passed, scenarios
from devtools.launcher import SuiteRun

Results = dict[BlindScenario, SuiteRun]


def _chosen(kind: str) -> list[BlindScenario]:
    return [s for s in scenarios() if s.kind == kind]


def _evidence(run: SuiteRun) -> str:
    found = [f"{f['clause']}: {f['expected']} / {f['observed']}"[:300] for f in run.findings()][:3]
    return f"verdict {run.verdict} (exit {run.exit_code}), violated {sorted(run.violated())}, {found}"


def _runnable(run: SuiteRun) -> None:
    """A server whose language runtime is not installed: skipped, or failed when CI requires the languages."""
    if run.verdict == UNAVAILABLE:
        required = os.environ.get("PETSTORE_REQUIRE_LANGUAGES") == "1"
        reason = f"PETSTORE_REQUIRE_LANGUAGES={int(required)}: {run.summary.get('reason')}"
        (pytest.fail if required else pytest.skip)(reason)


# The two tests below run on this tier's servers (selftests/tiers.py; conftest.py parametrizes).


@pytest.mark.catalog_kind("blind", "compliant")
def test_blind_compliant_server_passes(blind_catalog: Results, catalog_scenario: BlindScenario) -> None:
    scenario = catalog_scenario
    run = blind_catalog[scenario]
    _runnable(run)
    assert passed(run), f"false alarm on {scenario.label}: {_evidence(run)}\n{run.output[-2000:]}"


@pytest.mark.catalog_kind("blind", "fault")
def test_blind_fault_is_caught_or_a_known_miss(blind_catalog: Results, catalog_scenario: BlindScenario) -> None:
    scenario = catalog_scenario
    run = blind_catalog[scenario]
    _runnable(run)
    misses = known_misses()
    if scenario.key in misses:
        assert not caught(run), f"{scenario.key} is caught now: remove it from blind_misses.toml"
        return
    assert caught(run), f"blind fault {scenario.label} not caught: {_evidence(run)}\n{run.output[-2000:]}"


def test_every_known_miss_is_in_the_catalog() -> None:
    names = {s.key for s in _chosen("fault")}
    assert sorted(set(known_misses()) - names) == []


# Rounds 1 and 2 measure what the suite catches: many faults, and compliant variants beside them.
# Round 3 is a compliance round (issue 39): what it measures is the false alarms, so it holds compliant
# servers on real frameworks (each a server of its own, with its framework's answers where the document is
# silent) and only the few faults that show the Error-body checks still hold on those frameworks' pages.
COMPLIANCE_ROUNDS = {"blind3"}
# Round 4 (issue 45) holds servers in Go, PHP, Ruby and Perl: a reference and variants of each, and the faults
# that hide in each language's defaults (at least two compliant servers and four faults a language).
LANGUAGE_ROUNDS = {"blind4"}


def test_the_blind_catalog_is_large_enough() -> None:
    for round_ in ROUNDS:
        faults = [s for s in _chosen("fault") if s.round == round_]
        compliant = {s.name for s in _chosen("compliant") if s.round == round_}
        if round_ in COMPLIANCE_ROUNDS:
            assert len(compliant) >= 6 and len(faults) >= 3, round_
        elif round_ in LANGUAGE_ROUNDS:
            assert len(compliant) >= 8 and len(faults) >= 16, round_
        else:
            assert len(faults) >= 40 and len(compliant) >= 10, round_
