"""Shared fixtures of the project's own tests.

Two tiers (``tiers.py`` holds the rule): a plain run is tier 1, the fast gate of every change, and
runs a fixed slice of the catalogs; ``--self-proof`` (``python -m devtools.selfproof``) is tier 2, every
scenario of every catalog, the whole mutation sample and the repetition tests at their full counts.

The two catalogs (the kill matrix and the blind catalog) are a few hundred suite runs each.  They are
dealt into chunks, each chunk one xdist work unit (``xdist_group``), so that ``pytest selftests -n 2``
spreads them over the workers instead of running a whole catalog twice or in one worker; a chunk runs
when its first test asks for a result.  Every other module is one work unit (its module-scoped
fixtures run once).  The workers hand their results to the controller, which prints the kill matrix
and the blind score over all of them.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Hashable, Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any, Generic, TypeVar

import pytest

import blind_scores
import hosted
import proof_table
import tiers
from blind_scores import BlindScenario
from blind_scores import run_scenario as run_blind_scenario
from blind_scores import score_lines as blind_score_lines
from devtools import undecided
from devtools.killmatrix import QUICK, Scenario, render, run_scenario
from devtools.launcher import SuiteRun
from loopback import Api, apps_served
from netpeers import PeerServer
from petstore_contract.core import atomic
from petstore_contract.plugin.start import add_markers
from petstore_contract.transport import Transport
from transportkit import options

ROOT = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent
# The self-tests start a hundred or so suite runs in processes of their own; a machine that writes no
# bytecode (PYTHONDONTWRITEBYTECODE, as CI's does) would have each compile the project again (about half a
# second of CPU a run, measured).  The tests that are about a process without bytecode set it themselves
# (the wheel's runs, the mutation tool's mutants).
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
# Suite runs side by side in a chunk; each run is mostly Python work, so a little over the cores (alone),
# or two per worker when two xdist workers share the cores.
PARALLEL = int(os.environ.get("PETSTORE_SELFTEST_PARALLEL", "2" if "PYTEST_XDIST_WORKER" in os.environ else "3"))
# Chunks per catalog: enough for the workers to share them evenly, few enough that a chunk's last
# runs (when fewer than PARALLEL are left) cost little.  Tier 1's slice is a few per cent of the catalogs.
CHUNKS = {"kill-matrix": (4, 8), "blind": (2, 10)}  # (tier 1, tier 2)
SELF_PROOF_OPTION = "--self-proof"
TIERED = "tiered"  # the marker of every test whose size depends on the tier: what tier 2 runs
# The marker of a test (or one parameter of it) that only tier 2 runs: a repetition, another setting or
# another target of a mechanism that a test of tier 1 shows already (``tiers.py`` says which).
TIER_2 = "tier_2"
TIERED_FIXTURES = frozenset({"catalog", "blind_catalog", "whole_self_proof"})
CATALOGS_KEY = pytest.StashKey[dict[str, "Chunked[Any]"]]()
MERGED_KEY = pytest.StashKey[dict[str, list[Any]]]()

S = TypeVar("S", bound=Hashable)


class Chunked(Generic[S]):
    """A catalog's results, run a chunk at a time as its tests ask for them (each chunk once a process)."""

    def __init__(self, todo: list[S], chunks: int, run: Callable[[list[S]], dict[S, SuiteRun]]) -> None:
        self.todo, self.run = todo, run
        self.chunk_of = {s: n % chunks for n, s in enumerate(todo)}
        self.results: dict[S, SuiteRun] = {}
        self.seconds = 0.0  # wall time spent running chunks in this process

    def __getitem__(self, scenario: S) -> SuiteRun:
        if scenario not in self.results:
            chunk = self.chunk_of[scenario]
            started = time.monotonic()
            self.results.update(self.run([s for s in self.todo if self.chunk_of[s] == chunk]))
            self.seconds += time.monotonic() - started
        return self.results[scenario]


def self_proof(config: pytest.Config) -> bool:
    """Tier 2: every scenario of every catalog (``--self-proof``), not tier 1's slice."""
    return bool(config.getoption("self_proof", False))


def _chunk_of(todo: list[S], chunks: int) -> dict[S, int]:
    return {s: n % chunks for n, s in enumerate(todo)}


def _chunks(config: pytest.Config, catalog: str) -> int:
    return CHUNKS[catalog][self_proof(config)]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        SELF_PROOF_OPTION,
        action="store_true",
        dest="self_proof",
        help="tier 2: every scenario of every catalog, the whole mutation sample, full repetition counts",
    )


@pytest.fixture(scope="session")
def whole_self_proof(pytestconfig: pytest.Config) -> bool:
    """Tier 2 (``--self-proof``): a test with a sample or a repetition count takes its full size."""
    return self_proof(pytestconfig)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test that takes ``catalog_scenario`` runs on this tier's scenarios of its ``catalog_kind`` marker."""
    marker = metafunc.definition.get_closest_marker("catalog_kind")
    if marker is None or "catalog_scenario" not in metafunc.fixturenames:
        return
    catalog, kind = marker.args
    whole = self_proof(metafunc.config)
    todo: list[Any] = tiers.kill_matrix(whole) if catalog == "kill-matrix" else tiers.blind(whole)
    chosen = [s for s in todo if s.kind == kind or (kind == tiers.GENERATED_ONLY and tiers.generated_only(s))]
    if not chosen:  # none in this tier's slice (the blind rounds' faults in tier 1): the test is tier 2's
        metafunc.parametrize("catalog_scenario", [pytest.param(None, marks=pytest.mark.tier_2)], ids=["tier-2"])
        return
    metafunc.parametrize("catalog_scenario", chosen, ids=[s.label for s in chosen])


def _catalogs(config: pytest.Config) -> dict[str, Chunked[Any]]:
    return config.stash.setdefault(CATALOGS_KEY, {})


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "catalog_kind(catalog, kind): parametrized over this tier's scenarios")
    config.addinivalue_line("markers", f"{TIERED}: a test whose size depends on the tier (catalogs, samples, counts)")
    config.addinivalue_line("markers", f"{TIER_2}: run by the whole self-proof (tier 2) only")
    # The suite registers its markers in contract runs only (a vendor's session never sees them); a
    # self-test that imports a suite module's tables (test_silence.py: tests.test_outside) meets its marks.
    add_markers(config)
    # Any other xdist mode would give each worker tests of every chunk: the catalogs would run twice.
    if config.getoption("numprocesses", None) and config.getoption("dist", "no") != "loadgroup":
        raise pytest.UsageError("the self-tests deal their catalogs out by group: add --dist loadgroup to -n")


@pytest.fixture(scope="session")
def catalog(pytestconfig: pytest.Config) -> Chunked[Scenario]:
    """The contract suite against every fault, variant and unjudgeable target (each chunk once a process)."""
    todo = tiers.kill_matrix(self_proof(pytestconfig))

    def run(chosen: list[Scenario]) -> dict[Scenario, SuiteRun]:
        return hosted.side_by_side(chosen, lambda s: run_scenario(s, QUICK, hosted.run_hosted), PARALLEL)

    chunked = Chunked(todo, _chunks(pytestconfig, "kill-matrix"), run)
    return _catalogs(pytestconfig).setdefault("killmatrix", chunked)


@pytest.fixture(scope="session")
def blind_catalog(pytestconfig: pytest.Config) -> Chunked[BlindScenario]:
    """The contract suite against every server of the blind catalog (each chunk once a process)."""
    todo = tiers.blind(self_proof(pytestconfig))

    def run(chosen: list[BlindScenario]) -> dict[BlindScenario, SuiteRun]:
        return hosted.side_by_side(chosen, lambda s: run_blind_scenario(s, hosted.run_hosted), PARALLEL)

    chunked = Chunked(todo, _chunks(pytestconfig, "blind"), run)
    return _catalogs(pytestconfig).setdefault("blind", chunked)


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups into the node ids
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    whole = self_proof(config)
    kill_chunks = _chunk_of(tiers.kill_matrix(whole), _chunks(config, "kill-matrix"))
    blind_chunks = _chunk_of(tiers.blind(whole), _chunks(config, "blind"))
    tier_2_only = []
    for item in items:
        params = item.callspec.params if isinstance(item, pytest.Function) and hasattr(item, "callspec") else {}
        # A blind round's own self-proof (every fault demonstrated on its server) sweeps the catalog too.
        own_round = item.path.parent.parent == HERE and item.path.parent.name in blind_scores.ROUNDS
        if own_round or item.get_closest_marker(TIER_2):
            item.add_marker(TIERED)
            tier_2_only.append(item)
            if not whole:
                continue
        if "catalog" in item.fixturenames:
            group = f"kill-matrix-{kill_chunks[params['catalog_scenario']]}"
        elif "blind_catalog" in item.fixturenames:
            group = f"blind-catalog-{blind_chunks[params['catalog_scenario']]}"
        else:
            group = item.path.name
        item.add_marker(pytest.mark.xdist_group(group))
        if TIERED_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(TIERED)
    if tier_2_only and not whole:
        config.hook.pytest_deselected(items=tier_2_only)
        deselected = set(tier_2_only)
        items[:] = [item for item in items if item not in deselected]


# -- the reference's and the fault table's self-tests ------------------------------------------------


@pytest.fixture(scope="module")
def serve() -> Iterator[Callable[..., Api]]:
    """``serve(variant, fault, key)``: a fresh catalog app behind one loopback server, and its client."""
    with apps_served() as start:
        yield start


# -- the transport's self-tests (test_transport*.py) ----------------------------------------------


@pytest.fixture
def make_transport() -> Iterator[object]:
    made: list[Transport] = []

    def make(base_url: str, **changes: object) -> Transport:
        transport = Transport(options(base_url, **changes))
        made.append(transport)
        return transport

    yield make
    for transport in made:
        transport.close()


@pytest.fixture
def server() -> Iterator[PeerServer]:
    """A loopback peer that answers as each test tells it (``netpeers.PeerServer``)."""
    with PeerServer() as peer:
        yield peer


# -- the results, over every process ---------------------------------------------------------------


def _portable(chunked: Chunked[Any]) -> dict[str, Any]:
    runs = [[asdict(s), r.exit_code, r.seconds, r.summary] for s, r in chunked.results.items()]
    return {"runs": runs, "seconds": chunked.seconds}


def pytest_sessionfinish(session: pytest.Session) -> None:
    hosted.close()
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: the controller prints
        portable = {name: _portable(c) for name, c in _catalogs(session.config).items()}
        workeroutput["petstore_catalogs"] = json.dumps(portable)
        if proof_table.MUTATION_KEY in session.config.stash:
            workeroutput["petstore_mutation"] = json.dumps(session.config.stash[proof_table.MUTATION_KEY])


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    mutation = getattr(node, "workeroutput", {}).get("petstore_mutation")
    if mutation:
        node.config.stash[proof_table.MUTATION_KEY] = json.loads(mutation)
    data = getattr(node, "workeroutput", {}).get("petstore_catalogs")
    if data:
        merged = node.config.stash.setdefault(MERGED_KEY, {})
        for name, part in json.loads(data).items():
            merged.setdefault(name, []).append(part)


def _collected(config: pytest.Config) -> dict[str, tuple[dict[Any, SuiteRun], float]]:
    """Each catalog's results and its run time, from this process or from every xdist worker."""
    found: dict[str, tuple[dict[Any, SuiteRun], float]] = {}
    for name, chunked in _catalogs(config).items():
        found[name] = (dict(chunked.results), chunked.seconds)
    kinds: dict[str, Callable[..., Any]] = {"killmatrix": Scenario, "blind": BlindScenario}
    for name, parts in config.stash.get(MERGED_KEY, {}).items():
        results, seconds = found.get(name, ({}, 0.0))
        for part in parts:
            for fields, code, took, summary in part["runs"]:
                results[kinds[name](**fields)] = SuiteRun(code, took, summary=summary)
            seconds = max(seconds, part["seconds"])
        found[name] = (results, seconds)
    return found


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):
        return
    collected = _collected(config)
    if "killmatrix" in collected:
        results, seconds = collected["killmatrix"]
        matrix = render(results) + f"\n\nkill matrix: {len(results)} runs, {seconds:.0f} s (the longest process)"
        (ROOT / "reports").mkdir(exist_ok=True)
        atomic.write_text(ROOT / "reports" / "kill-matrix.md", matrix + "\n")
        terminalreporter.section("kill matrix (scenario -> verdict, violated clauses, collateral) and scores")
        terminalreporter.write_line(matrix)
        faults = proof_table.empty_faults(results)
        if faults:  # the same runs, per fault: the clauses left undecided beside the violated ones
            atomic.write_text(ROOT / "reports" / "one-fault.md", undecided.render(faults) + "\n")
            left = proof_table.one_fault_left(results)
            terminalreporter.write_line(
                f"one fault, one clause: {len(left)} of {len(faults)} faults leave another clause undecided "
                f"unexplained{': ' + ', '.join(left) if left else ''} (reports/one-fault.md)"
            )
    if "blind" in collected:
        results, seconds = collected["blind"]
        lines = [
            *blind_score_lines(results),
            f"blind catalog: {len(results)} runs, {seconds:.0f} s (the longest process)",
        ]
        terminalreporter.section("blind catalog (servers written from the document alone), scored on its own")
        terminalreporter.write_line("\n".join(lines))
    _self_proof_table(terminalreporter, config, collected)


def _self_proof_table(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config, collected: dict[str, Any]
) -> None:
    """One table of the run's self-proof figures, and the same as JSON in reports/ (with the commit)."""
    mutation = config.stash.get(proof_table.MUTATION_KEY, None)
    if not collected and mutation is None:
        return
    whole = self_proof(config)
    figures: dict[str, Any] = {
        "tier": 2 if whole else 1,
        "scope": "every catalog scenario" if whole else "tier 1's slice (selftests/tiers.py)",
        "commit": proof_table.commit(ROOT),
    }
    if "killmatrix" in collected:
        figures["kill matrix"] = proof_table.kill_matrix_figures(collected["killmatrix"][0])
    if "blind" in collected:
        figures["blind rounds"] = proof_table.blind_figures(collected["blind"][0])
    if mutation is not None:
        figures["mutation sample"] = mutation
    (ROOT / "reports").mkdir(exist_ok=True)
    atomic.write_text(
        ROOT / "reports" / f"self-proof-tier-{figures['tier']}.json", json.dumps(figures, indent=2) + "\n"
    )
    terminalreporter.section("self-proof")
    terminalreporter.write_line(proof_table.table(figures))
