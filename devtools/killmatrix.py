"""The suite against every fault (on an empty and on a crowded store), every compliant variant
and every target it cannot judge (the catalog, ``devtools/catalog``): the kill matrix, collateral
included, and the scores.

A fault is *caught* when the run is not conformant, its clause is violated, and no clause outside
the fault's declared dependants is (collateral).  On the crowded store a fault that needs the
whole store in view may instead leave its clause undecided.  A compliant variant must end
conformant; an unjudgeable target must end inconclusive.
"""

from __future__ import annotations

import contextlib
import dataclasses
import secrets
import socket
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from devtools.catalog import FAULTS, UNJUDGEABLE, VARIANTS, catalog_app
from devtools.launcher import Runner, SuiteRun, run_suite
from devtools.suitehost import suite_hosts
from petstore_contract.interface.clauses import CLAUSE_IDS
from petstore_contract.reference import REFERENCE, BackgroundServer
from petstore_contract.reference.variants import Variant

# The crowded Staging: more than a page of every status (400 animals, 133 or more of each),
# listed oldest first so that the animals the suite creates never show on a page, and another
# client adding one every 7th request while the run goes on.
CROWDED_STORE = 400
EMPTY, CROWDED = "empty", "crowded"
QUICK = ("--contract-profile", "quick")


@dataclass(frozen=True)
class Scenario:
    kind: str  # fault | variant | unjudgeable
    name: str
    store: str = EMPTY

    @property
    def label(self) -> str:
        return f"{self.name} ({self.store})" if self.kind == "fault" or self.store == CROWDED else self.name


# Faults whose clause depends on what the store holds (list, identity) also run on the crowded
# store; the others behave the same on any store.
STORE_SENSITIVE = ("list.", "read.", CLAUSE_IDS.create_id, CLAUSE_IDS.create_reject_nothing_created, "stateful.")


# The over-budget target answers each request a second late: a run's set-up alone is more than
# OVER_BUDGET_SECONDS answers in a row (the health probe, the early look, the creates it reads back), so the
# budget is spent by the target's own delay on any machine, never by how fast this one runs the suite.
OVER_BUDGET_SECONDS = 3.0
OVER_BUDGET = dataclasses.replace(VARIANTS["slow"], latency_seconds=1.0)


def scenarios() -> list[Scenario]:
    found = [Scenario("fault", name, EMPTY) for name in FAULTS]
    found += [
        Scenario("fault", n, CROWDED)
        for n, f in FAULTS.items()
        if f.clause.startswith(STORE_SENSITIVE) or f.also_crowded
    ]
    found += [Scenario("variant", name) for name in VARIANTS]
    # Every compliant variant passes on the crowded store too, but those that bring their own store
    # or pace (a preloaded or busy store, throttling, latency): they are that store already.
    found += [Scenario("variant", name, CROWDED) for name, v in VARIANTS.items() if _plain_store(v)]
    found += [
        Scenario("unjudgeable", name) for name in ("closed-port", "blackhole", "rejects-every-key", "over-budget")
    ]
    return found


def _plain_store(variant: Variant) -> bool:
    return not (variant.preload or variant.background_writer or variant.throttle_every or variant.latency_seconds)


def _crowded(variant: Variant) -> Variant:
    return dataclasses.replace(variant, preload=CROWDED_STORE, newest_first=False, background_writer=True)


def _variant(scenario: Scenario) -> Variant:
    if scenario.kind == "variant":
        variant = VARIANTS[scenario.name]
        return _crowded(variant) if scenario.store == CROWDED else variant
    if scenario.kind == "unjudgeable" and scenario.name in UNJUDGEABLE:
        return UNJUDGEABLE[scenario.name]
    if scenario.name == "over-budget":
        return OVER_BUDGET
    return _crowded(REFERENCE) if scenario.store == CROWDED else REFERENCE


@contextlib.contextmanager
def blackhole() -> Iterator[str]:
    """A port that accepts connections (the kernel's backlog) and never answers."""
    with socket.create_server(("127.0.0.1", 0), backlog=64) as listener:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1"


@contextlib.contextmanager
def _closed_port() -> Iterator[str]:
    """A port bound but not listening: connections are refused, and no other server can take it meanwhile."""
    with socket.socket() as bound:
        bound.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{bound.getsockname()[1]}/v1"


def run_scenario(scenario: Scenario, suite_args: tuple[str, ...] = QUICK, runner: Runner = run_suite) -> SuiteRun:
    key = "killmatrix-" + secrets.token_urlsafe(12)
    hostile = ("--contract-request-timeout", "1", "--contract-circuit-breaker", "3")
    if scenario.name == "closed-port":
        with _closed_port() as url:
            return runner(url, key, *suite_args, *hostile)
    if scenario.name == "blackhole":
        with blackhole() as url:
            return runner(url, key, *suite_args, *hostile)
    budget = ("--contract-run-budget", f"{OVER_BUDGET_SECONDS:g}") if scenario.name == "over-budget" else ()
    fault = scenario.name if scenario.kind == "fault" else None
    with BackgroundServer(catalog_app(key, _variant(scenario), fault)) as server:
        return runner(server.base_url, key, *suite_args, *budget)


def run_catalog(chosen: Iterable[Scenario] | None = None, parallel: int = 3) -> dict[Scenario, SuiteRun]:
    """Every scenario (or the chosen), ``parallel`` at a time, each in a suite host (``suitehost.py``)."""
    todo = list(chosen if chosen is not None else scenarios())
    with suite_hosts() as hosts, ThreadPoolExecutor(max_workers=parallel) as pool:
        return dict(zip(todo, pool.map(lambda scenario: run_scenario(scenario, QUICK, hosts.run), todo), strict=True))


def collateral(scenario: Scenario, run: SuiteRun) -> set[str]:
    fault = FAULTS[scenario.name]
    return run.violated() - {fault.clause, *fault.dependants}


def caught(scenario: Scenario, run: SuiteRun) -> bool:
    fault = FAULTS[scenario.name]
    if fault.intermittent:  # the 5xx of a cold start is a gateway's to any client: named, never passed
        deployment = str(run.summary.get("reason", "")).startswith("the deployment answered 5")
        return run.verdict == "inconclusive" and deployment and not collateral(scenario, run)
    return run.verdict == "not_conformant" and fault.clause in run.violated() and not collateral(scenario, run)


def suite_errors(run: SuiteRun) -> int:
    """Tests that ended in an error of the suite itself (a check that crashed on what it was sent)."""
    return int(run.summary.get("tests", {}).get("error", 0))


def acceptable(scenario: Scenario, run: SuiteRun) -> bool:
    """What the self-test demands of each scenario; a check that crashed fails any scenario."""
    if suite_errors(run):
        return False
    if scenario.kind == "variant":
        return run.verdict == "conformant" and run.exit_code == 0
    if scenario.kind == "unjudgeable":
        return run.verdict == "inconclusive" and run.exit_code == 6
    if caught(scenario, run):
        return True
    # On a store too large to see whole, a fault that needs the whole store in view (or that the
    # crowded store hides from any client, ``unseen_when_crowded``) may go unseen: its clause
    # undecided, or (when the fault never shows on what was seen) conforming; never collateral.
    fault = FAULTS[scenario.name]
    unseen = fault.clause not in run.violated() and not collateral(scenario, run)
    hidden = fault.needs_complete_view or bool(fault.unseen_when_crowded)
    return scenario.store == CROWDED and hidden and unseen


def render(results: dict[Scenario, SuiteRun]) -> str:
    """The kill matrix in Markdown: every scenario, what the suite said, collateral, and the scores."""
    lines = ["| scenario | clause | verdict | violated | collateral | ok |", "|---|---|---|---|---|---|"]
    for scenario, run in sorted(results.items(), key=lambda item: (item[0].kind, item[0].name, item[0].store)):
        clause = FAULTS[scenario.name].clause if scenario.kind == "fault" else "-"
        extra = sorted(collateral(scenario, run)) if scenario.kind == "fault" else []
        ok = "yes" if acceptable(scenario, run) else "**NO**"
        ok += f" ({suite_errors(run)} suite errors)" if suite_errors(run) else ""
        violated = ", ".join(sorted(run.violated())) or "-"
        lines.append(
            f"| {scenario.kind}: `{scenario.label}` | {clause} | {run.verdict} | {violated} | "
            f"{', '.join(extra) or '-'} | {ok} |"
        )
    lines += ["", *score_lines(results)]
    return "\n".join(lines)


def score_lines(results: dict[Scenario, SuiteRun]) -> list[str]:
    lines = []
    for kind, title in (
        ("fault", "faults caught"),
        ("variant", "compliant servers passed"),
        ("unjudgeable", "unjudgeable targets inconclusive"),
    ):
        chosen = [(s, r) for s, r in results.items() if s.kind == kind]
        good = sum(acceptable(s, r) for s, r in chosen)
        lines.append(f"{title}: {good}/{len(chosen)}")
    extra = sum(len(collateral(s, r)) for s, r in results.items() if s.kind == "fault")
    lines.append(f"collateral clauses over all fault runs: {extra}")
    crowded = [(s, r) for s, r in results.items() if s.kind == "fault" and s.store == CROWDED]
    if crowded:
        unseen = sorted(s.name for s, r in crowded if acceptable(s, r) and not caught(s, r))
        lines.append(
            f"crowded store: {sum(caught(s, r) for s, r in crowded)}/{len(crowded)} store-sensitive faults caught "
            f"on their clause; unseen there (whole store needed, or hidden from any client): {', '.join(unseen) or '-'}"
        )
    return lines
