"""The plugin's command-line options, as data, and the checks of their values (one line each)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from petstore_contract import profiles
from petstore_contract.run import DEFAULT_CONCURRENCY, DEFAULT_TIMEOUT

# The plugin's options, as data: (flags, dest, argparse keywords).
OPTIONS: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("--target", "petstore_target", {"help": "a named target from pyproject.toml (staging, production)"}),
    ("--read-only", "petstore_read_only", {"action": "store_true", "help": "send no POST"}),
    ("--allow-writes", "petstore_allow_writes", {"action": "store_true", "help": "let a read-only target be written"}),
    (
        "--contract-profile",
        "petstore_profile",
        {
            "default": "default",
            "help": "depth of the generated tests: quick, default (CI gate) or deep (nightly)",
        },
    ),
    (
        "--contract-seed",
        "petstore_seed",
        {"type": int, "default": profiles.DEFAULT_SEED, "help": "seed of the generated tests"},
    ),
    (
        "--request-timeout",
        "petstore_timeout",
        {"type": float, "default": DEFAULT_TIMEOUT, "help": "seconds to wait for a connection or the next bytes"},
    ),
    (
        "--concurrency",
        "petstore_concurrency",
        {
            "type": int,
            "default": DEFAULT_CONCURRENCY,
            "metavar": "N",
            "help": f"independent requests in flight at once (default {DEFAULT_CONCURRENCY}; 1: one at a time)",
        },
    ),
    (
        "--child-processes",
        "petstore_child_processes",
        {
            "default": "auto",
            "help": "auto: the stateful walks run in child processes when a core is there for them; "
            "none: every test in this process (e.g. several runs share the cores)",
        },
    ),
    ("--ca-bundle", "petstore_ca_bundle", {"help": "CA bundle to verify the target's TLS certificate"}),
    ("--client-cert", "petstore_client_cert", {"metavar": "FILE", "help": "client certificate (PEM) for mutual TLS"}),
    ("--client-key", "petstore_client_key", {"metavar": "FILE", "help": "the client certificate's key (PEM)"}),
    (
        "--no-proxy-env",
        "petstore_no_proxy_env",
        {"action": "store_true", "help": "ignore HTTPS_PROXY/HTTP_PROXY/NO_PROXY (used for non-loopback targets)"},
    ),
    (
        "--report-dir",
        "petstore_report_dir",
        {"metavar": "DIR", "help": "where report.html, summary.md, summary.json go (default ./reports)"},
    ),
    (
        "--run-budget",
        "petstore_run_budget",
        {
            "type": float,
            "metavar": "SECONDS",
            "help": "seconds for the whole run; once spent, nothing more is sent and the run is inconclusive",
        },
    ),
    (
        "--max-body-bytes",
        "petstore_max_body",
        {"type": int, "default": 4_000_000, "metavar": "BYTES", "help": "read at most this much of an answer"},
    ),
    (
        "--circuit-breaker",
        "petstore_trip_after",
        {"type": int, "default": 3, "metavar": "N", "help": "send nothing after N requests in a row got no answer"},
    ),
    (
        "--contract-waivers",
        "petstore_waivers",
        {"metavar": "FILE", "help": "waivers to apply to the exit code (default: waivers.toml in the project root)"},
    ),
    (
        "--contract-record",
        "petstore_record",
        {"metavar": "DIR", "help": "keep every request and answer of the run in DIR (for exchanges.har)"},
    ),
    (
        "--contract-certify",
        "petstore_certify",
        {"action": "store_true", "help": "a certification run (petstore-contract certify): the full suite, no waivers"},
    ),
)


def add_to(parser: pytest.Parser) -> None:
    group = parser.getgroup("petstore", "Pet Store contract suite")
    for flag, dest, keywords in OPTIONS:
        group.addoption(flag, dest=dest, **keywords)


# Options with a closed set of values; checked here rather than by argparse's ``choices``, whose
# error is a usage screen, not one line.
CHOICES = (
    ("--contract-profile", "petstore_profile", tuple(profiles.PROFILES)),
    ("--child-processes", "petstore_child_processes", ("auto", "none")),
)


def check(option: Any) -> None:
    """A value out of its range or set is a usage error: one line, no traceback."""
    for name, dest, allowed in CHOICES:
        if getattr(option, dest) not in allowed:
            raise pytest.UsageError(f"{name} must be one of {', '.join(allowed)}, got {getattr(option, dest)!r}")
    for name, value in (("--request-timeout", option.petstore_timeout), ("--run-budget", option.petstore_run_budget)):
        if value is not None and not value > 0:
            raise pytest.UsageError(f"{name} must be a positive number of seconds, got {value}")
    for name, value, least in (
        ("--max-body-bytes", option.petstore_max_body, 1),
        ("--circuit-breaker", option.petstore_trip_after, 0),
        ("--concurrency", option.petstore_concurrency, 1),
    ):
        if value < least:
            raise pytest.UsageError(f"{name} must be at least {least}, got {value}")
    if option.petstore_concurrency > 64:
        raise pytest.UsageError(f"--concurrency must be at most 64, got {option.petstore_concurrency}")
    if bool(option.petstore_client_cert) != bool(option.petstore_client_key) and option.petstore_client_key:
        raise pytest.UsageError("--client-key needs --client-cert")
    for name, path in (
        ("--client-cert", option.petstore_client_cert),
        ("--client-key", option.petstore_client_key),
        ("--ca-bundle", option.petstore_ca_bundle),
    ):
        if path and not Path(path).is_file():
            raise pytest.UsageError(f"{name}: no such file: {path}")
