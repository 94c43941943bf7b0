"""The run's facts as the reports show them: their labels, in the order a reader wants them, and which are counts."""

from __future__ import annotations

# The facts in the order a reader wants them, with their labels; other facts follow in their own order.
FACT_LABELS = {
    "target": "Target",
    "base_url": "Base URL",
    "mode": "Mode",
    "profile": "Profile",
    "seed": "Seed",
    "run_id": "Run id",
    "concurrency": "Concurrency",
    "preflight_ms": "Pre-flight request (ms)",
    "started": "Started",
    "finished": "Finished",
    "duration_s": "Duration",
    "requests": "Requests",
    "writes": "Writes",
    "no_answer": "Requests unanswered",
    "throttled": "Throttled answers",
    "throttle_wait_s": "Waited for throttling",
    "concurrency_min": "Lowest concurrency (throttled)",
    "repeats_not_sent": "Repeated generated cases, not sent again",
    "connection_resets": "Connections reset before an answer",
    "unknown_writes": "Writes whose answer was lost (never sent again)",
    "stalled_answers": "Answers that stalled",
    "busy_resends": "Requests sent again to a busy target",
    "writes_found": "Writes whose answer was lost, found applied",
    "bodies_cut": "Answers cut off by the time limit",
    "layer_requests": "HTTP layer: requests sent as written",
    "layer_kinds": "HTTP layer: kinds of request",
    "layer_bytes": "HTTP layer: bytes of large bodies",
    "reasked": "Findings' requests asked again at the end",
    "judged": "Answers judged by the pipeline of every exchange",
    "unanswered": "Requests it could not judge (no answer, a redirect hop followed)",
    "created": "Animals created",
    "held_back": "Generated creates held back (the store was not seen whole)",
    "suite_version": "Suite version",
    "schemathesis_version": "Schemathesis version",
    "hypothesis_version": "Hypothesis version",
    "pytest_version": "pytest version",
    "spec_sha256": "Spec SHA-256",
    "key_env": "API key from",
    "replay": "Replay",
}

# Shown as 1,873.
COUNTED_FACTS = frozenset(
    {
        "requests",
        "writes",
        "no_answer",
        "throttled",
        "concurrency",
        "concurrency_min",
        "repeats_not_sent",
        "connection_resets",
        "unknown_writes",
        "stalled_answers",
        "busy_resends",
        "bodies_cut",
        "writes_found",
        "layer_requests",
        "layer_kinds",
        "layer_bytes",
        "reasked",
        "created",
        "held_back",
    }
)

# The facts every report.html shows above the fold (the rest are folded): where the run went, when, what it
# cost; then each count of trouble that is not zero (a reader must see a lost write or a reset at once).
TOP_FACTS = ("target", "base_url", "mode", "seed", "started", "duration_s", "requests", "writes", "created")
TROUBLE_FACTS = frozenset(
    {
        "no_answer",
        "throttled",
        "connection_resets",
        "unknown_writes",
        "stalled_answers",
        "busy_resends",
        "writes_found",
        "bodies_cut",
        "held_back",
    }
)
