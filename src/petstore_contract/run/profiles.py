"""How deep the generated tests dig: one option picks the profile, the seed makes it repeatable."""

from __future__ import annotations

from dataclasses import dataclass

from petstore_contract.defaults import DEFAULT_SEED as DEFAULT_SEED


@dataclass(frozen=True)
class Profile:
    name: str
    summary: str
    max_examples: int  # Hypothesis examples per operation in the fuzzing phase
    stateful_examples: int  # state machine runs
    stateful_steps: int  # steps per run


PROFILES = {
    p.name: p
    for p in (
        Profile("quick", "smoke runs and the self-test's many servers", 10, 8, 5),
        Profile("default", "the CI gate", 40, 10, 6),
        Profile("deep", "nightly runs", 300, 100, 15),
    )
}
