"""The suite against every fault and every compliant variant: the kill matrix and the two scores."""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from petstore_contract.reference import FAULTS, VARIANTS, BackgroundServer, build_app
from petstore_contract.reference.variants import Variant
from petstore_contract.selfcheck import SuiteRun, run_suite

GENERATED_MODULES = ("tests.test_generated", "tests.test_stateful")


@dataclass
class Outcomes:
    faults: dict[str, SuiteRun]
    variants: dict[str, SuiteRun]

    def caught(self, fault: str) -> bool:
        run = self.faults[fault]
        return run.exit_code == 1 and FAULTS[fault].clause in run.caught_clauses()

    def sensitivity(self) -> tuple[int, int]:
        return sum(self.caught(name) for name in self.faults), len(self.faults)

    def specificity(self) -> tuple[int, int]:
        return sum(run.exit_code == 0 for run in self.variants.values()), len(self.variants)


def run_against(variant: Variant, fault: str | None, suite_args: Iterable[str]) -> SuiteRun:
    key = "selfcheck-" + secrets.token_urlsafe(12)
    with BackgroundServer(build_app(key, variant, fault)) as server:
        return run_suite(server.base_url, key, *suite_args)


def run_catalog(suite_args: Iterable[str] = ("--contract-profile", "quick"), parallel: int = 2) -> Outcomes:
    """Every fault on the reference, every variant without fault; ``parallel`` suites at a time."""
    args = tuple(suite_args)
    jobs = {("fault", name): (VARIANTS["reference"], name) for name in FAULTS}
    jobs |= {("variant", name): (variant, None) for name, variant in VARIANTS.items()}
    with ThreadPoolExecutor(max_workers=parallel) as pool:
        futures = {job: pool.submit(run_against, variant, fault, args) for job, (variant, fault) in jobs.items()}
        results = {job: future.result() for job, future in futures.items()}
    return Outcomes(
        faults={name: run for (kind, name), run in results.items() if kind == "fault"},
        variants={name: run for (kind, name), run in results.items() if kind == "variant"},
    )


def render(outcomes: Outcomes) -> str:
    """A Markdown kill matrix (fault → clause → tests that caught it) and both scores."""
    lines = ["| fault | clause | caught | failing tests |", "|---|---|---|---|"]
    for name, run in sorted(outcomes.faults.items()):
        tests = sorted(_short(t) for t in run.failed)
        shown = ", ".join(tests[:4]) + (f" (+{len(tests) - 4})" if len(tests) > 4 else "")
        lines.append(f"| `{name}` | {FAULTS[name].clause} | {'yes' if outcomes.caught(name) else '**NO**'} | {shown} |")
    lines += ["", "| compliant server | verdict | seconds |", "|---|---|---|"]
    for name, run in sorted(outcomes.variants.items()):
        verdict = "passed" if run.exit_code == 0 else f"**FAILED** ({len(run.failed)} tests)"
        lines.append(f"| {name} | {verdict} | {run.seconds:.1f} |")
    caught, faults = outcomes.sensitivity()
    passed, variants = outcomes.specificity()
    lines += [
        "",
        f"faults caught: {caught}/{faults} ({100 * caught / faults:.0f}%)",
        f"compliant servers passed: {passed}/{variants} ({100 * passed / variants:.0f}%)",
    ]
    return "\n".join(lines)


def _short(test_id: str) -> str:
    return test_id.removeprefix("tests.").replace("::test_", "::")
