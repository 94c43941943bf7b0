"""The plugin's command-line options, as data, and the checks of their values (one line each)."""

from __future__ import annotations

import difflib
import itertools
import os
import shlex
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from petstore_contract.defaults import (
    DEFAULT_CIRCUIT_BREAKER,
    DEFAULT_CONCURRENCY,
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_SEED,
    DEFAULT_TIMEOUT,
)


@dataclass(frozen=True)
class Option:
    """One option of the plugin: its flag and argparse's keywords.  Its dest is its name (``dest_of``), as
    pytest derives it: ``--contract-circuit-breaker`` is ``option.contract_circuit_breaker``."""

    flag: str
    help: str
    metavar: str | None = None
    action: str | None = None  # "store_true": a switch
    type: Callable[[str], int | float] | None = None
    default: str | int | float | None = None

    def keywords(self) -> dict[str, object]:
        """The keywords of ``parser.addoption`` (those given)."""
        given = {"metavar": self.metavar, "action": self.action, "type": self.type, "default": self.default}
        return {"help": self.help, **{name: value for name, value in given.items() if value is not None}}


# The plugin's options, as data.
OPTIONS: tuple[Option, ...] = (
    Option(
        "--contract-target",
        metavar="NAME",
        help="a named target of pyproject.toml ([tool.petstore_contract.targets.NAME])",
    ),
    Option("--contract-read-only", action="store_true", help="send no POST"),
    Option("--contract-allow-writes", action="store_true", help="let a read-only target be written"),
    Option(
        "--contract-profile",
        default="default",
        help="depth of the generated tests: quick, default (CI gate) or deep (nightly)",
    ),
    Option("--contract-seed", type=int, default=DEFAULT_SEED, help="seed of the generated tests"),
    Option(
        "--contract-request-timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        metavar="SECONDS",
        help="seconds to wait for a connection or the next bytes",
    ),
    Option(
        "--contract-concurrency",
        type=int,
        default=DEFAULT_CONCURRENCY,
        metavar="N",
        help=f"independent requests in flight at once (default {DEFAULT_CONCURRENCY}; 1: one at a time)",
    ),
    Option(
        "--contract-child-processes",
        default="auto",
        metavar="auto|none",
        help="deprecated, changes nothing: the run starts no child processes of its own",
    ),
    Option("--contract-ca-bundle", metavar="FILE", help="CA bundle to verify the target's TLS certificate"),
    Option("--contract-client-cert", metavar="FILE", help="client certificate (PEM) for mutual TLS"),
    Option("--contract-client-key", metavar="FILE", help="the client certificate's key (PEM)"),
    Option(
        "--contract-no-proxy-env",
        action="store_true",
        help="ignore HTTPS_PROXY/HTTP_PROXY/NO_PROXY (used for non-loopback targets)",
    ),
    Option(
        "--contract-report-dir",
        metavar="DIR",
        help="where report.html, summary.md, summary.json go (default ./reports)",
    ),
    Option(
        "--contract-run-budget",
        type=float,
        metavar="SECONDS",
        help="seconds for the whole run; once spent, nothing more is sent and the run is inconclusive",
    ),
    Option(
        "--contract-max-body-bytes",
        type=int,
        default=DEFAULT_MAX_BODY_BYTES,
        metavar="BYTES",
        help="read at most this much of an answer",
    ),
    Option(
        "--contract-circuit-breaker",
        type=int,
        default=DEFAULT_CIRCUIT_BREAKER,
        metavar="N",
        help="send nothing after N requests in a row got no answer",
    ),
    Option(
        "--contract-waivers",
        metavar="FILE",
        help="waivers to apply to the exit code (default: waivers.toml in the project root)",
    ),
    Option(
        "--contract-record", metavar="DIR", help="keep every request and answer of the run in DIR (for exchanges.har)"
    ),
    Option(
        "--contract-certify",
        action="store_true",
        help="a certification run (petstore-contract certify): the full suite, no waivers",
    ),
)


# Every option is ``--contract-<name>``, so that another plugin or a project's conftest in the same
# environment keeps its own ``--target`` or ``--concurrency``: pytest loads this plugin into every
# session of the environment, and argparse refuses a name registered twice.  The unprefixed names of
# before issue 26 are gone (issue 47): an alias, even a deprecated one, breaks such a project.
PREFIX = "--contract-"

# Options that no longer change anything (issue 32: the stateful walks run on the run's pool of threads,
# not in child processes): still accepted, value checked as before, with a one-line notice.
RETIRED: dict[str, str] = {
    "--contract-child-processes": "the run starts no child processes of its own",
}


def dest_of(flag: str) -> str:
    """Its attribute on ``config.option``: its name, as pytest derives it (``--contract-x-y``: ``contract_x_y``)."""
    return flag.removeprefix("--").replace("-", "_")


# dest -> the option's name, for messages
FLAG: dict[str, str] = {dest_of(option.flag): option.flag for option in OPTIONS}


def add_to(parser: pytest.Parser) -> None:
    group = parser.getgroup("petstore", "Pet Store contract suite")
    for option in OPTIONS:
        group.addoption(option.flag, dest=dest_of(option.flag), **option.keywords())


def unknown_option_line(parser: pytest.Parser, args: Sequence[str]) -> str:
    """The one-line usage error for an option nobody declared that is meant as one of the suite's (a
    typo), naming the option probably meant; "" where pytest's own message is the right one.

    Called once every plugin and initial conftest has declared its options, so that a project's own
    option is never taken for a typo.  Only a name in the suite's namespace (``--contract-...``, its
    prefix mistyped included) or one close to ``--base-url`` is answered here; any other, the unprefixed
    names of before issue 26 among them, stays pytest's ``unrecognized arguments``."""
    try:
        _, unknown = parser.parse_known_and_unknown_args(list(args))
    except pytest.UsageError:  # a bad value: pytest says which, as before
        return ""
    for arg in unknown:
        name = arg.split("=", 1)[0]
        if difflib.get_close_matches(name, ["--base-url"], cutoff=0.8):
            return (
                f"unknown option {name}; did you mean --base-url? (petstore-contract --help lists the suite's options)"
            )
        head = name.removeprefix("--").split("-", 1)[0]
        if not name.startswith("--") or not difflib.get_close_matches(head, ["contract"], cutoff=0.75):
            continue
        # the rest of the name against the rest of each option's (the shared prefix would make any close)
        rest = {flag.removeprefix(PREFIX): flag for flag in FLAG.values()}
        close = difflib.get_close_matches(name.removeprefix("--").partition("-")[2], rest, n=1, cutoff=0.7)
        meant = f"; did you mean {rest[close[0]]}?" if close else ""
        return f"unknown option {name}{meant} (petstore-contract --help lists the suite's options)"
    return ""


def suite_help() -> str:
    """The suite's options, for the top of ``petstore-contract --help`` (pytest lists them among its own)."""
    rows = [("PETSTORE_API_KEY", "the API key, from the environment only (never the command line)")]
    rows.append(("--base-url URL", "the deployment to judge, ending in /v1 (none: the embedded reference)"))
    for option in OPTIONS:
        if option.flag in RETIRED or option.flag == "--contract-certify":
            continue
        metavar = option.metavar or ("" if option.action else option.flag.removeprefix(PREFIX).upper())
        default = option.default
        shown = f" (default {default})" if default not in (None, False) and "default" not in option.help else ""
        rows.append((f"{option.flag} {metavar}".strip(), option.help + shown))
    width = max(len(name) for name, _ in rows) + 2
    return "\n".join(f"  {name.ljust(width)}{text}" for name, text in rows)


def deprecated_names(args: Iterable[str]) -> list[str]:
    """The retired options among ``args`` (``--contract-child-processes none``, ``...=none``), each once, in order."""
    used: list[str] = []
    for arg in args:
        if arg == "--":  # what follows is not an option
            break
        name = arg.split("=", 1)[0]
        if name in RETIRED and name not in used:
            used.append(name)
    return used


def deprecation_line(old: str) -> str:
    return f"petstore-contract: {old} is deprecated and changes nothing ({RETIRED[old]}); it goes in the next release"


def notice_deprecated(config: pytest.Config) -> None:
    """One line on stderr for each retired option the run was given: on its command line, in ``addopts``
    or in ``PYTEST_ADDOPTS``.  Once per run: xdist workers are given their settings by the process that
    started them, which has said it.  Never an error, never a warning (``-W error`` would make one
    fatal): the run and its exit code are the same with or without it."""
    if hasattr(config, "workerinput"):
        return
    given = [
        *config.getini("addopts"),
        *shlex.split(os.environ.get("PYTEST_ADDOPTS", "")),
        *config.invocation_params.args,
    ]
    for old in deprecated_names(given):
        sys.stderr.write(deprecation_line(old) + "\n")
    sys.stderr.flush()


def declare_base_url(early_config: pytest.Config, parser: pytest.Parser) -> None:
    """``--base-url`` is pytest-base-url's; where that plugin is absent or disabled (``-p no:base_url``)
    the suite declares the option itself, so that its documented command line works either way.

    Called from ``pytest_load_initial_conftests``: by then every installed plugin is registered or
    blocked, which ``pytest_addoption`` cannot know (the order in which entry points load is not
    defined), and options added here are still parsed."""
    loaded = (getattr(plugin, "__name__", "") for plugin in early_config.pluginmanager.get_plugins())
    if "pytest_base_url.plugin" not in loaded:
        parser.getgroup("petstore").addoption(
            "--base-url", dest="base_url", metavar="URL", help="the deployment to judge (its base URL, ending in /v1)"
        )


def base_url_sources(config: pytest.Config) -> tuple[str | None, list[tuple[str, str]]]:
    """``--base-url`` as given (command line, ``addopts``, ``PYTEST_ADDOPTS``), else None; and
    pytest-base-url's other sources as (where, URL).

    pytest-base-url makes ``PYTEST_BASE_URL`` the option's default and copies its ini ``base_url``
    into the option in its own ``pytest_configure``, which may run before or after this plugin's:
    the option's value alone cannot say where it came from, the words given can."""
    words = [
        *config.getini("addopts"),
        *shlex.split(os.environ.get("PYTEST_ADDOPTS", "")),
        *map(str, config.invocation_params.args),
    ]
    words = words[: words.index("--")] if "--" in words else words
    given = any(word == "--base-url" or word.startswith("--base-url=") for word in words)
    command_line = config.getoption("base_url", default=None) if given else None
    foreign = []
    if os.environ.get("PYTEST_BASE_URL"):
        foreign.append(("PYTEST_BASE_URL", os.environ["PYTEST_BASE_URL"]))
    try:
        ini = config.getini("base_url")
    except ValueError:  # pytest-base-url is not loaded: no such ini key
        ini = ""
    if ini:
        home = config.inipath.name if config.inipath is not None else "the ini file"
        foreign.append((f"base_url in {home}", str(ini)))
    return command_line, foreign


def check(option: Any) -> None:
    """A value out of its range or set is a usage error: one line, no traceback, the option's name."""
    from petstore_contract.run import profiles  # the run's modules load in contract runs only

    # Options with a closed set of values; checked here rather than by argparse's ``choices``, whose
    # error is a usage screen, not one line.
    choices = (
        ("contract_profile", tuple(profiles.PROFILES)),
        ("contract_child_processes", ("auto", "none")),  # retired: a value it never took is still an error
    )
    for dest, allowed in choices:
        if getattr(option, dest) not in allowed:
            raise pytest.UsageError(f"{FLAG[dest]} must be one of {', '.join(allowed)}, got {getattr(option, dest)!r}")
    for dest in ("contract_request_timeout", "contract_run_budget"):
        value = getattr(option, dest)
        if value is not None and not value > 0:
            raise pytest.UsageError(f"{FLAG[dest]} must be a positive number of seconds, got {value}")
    for dest, least in (("contract_max_body_bytes", 1), ("contract_circuit_breaker", 0), ("contract_concurrency", 1)):
        value = getattr(option, dest)
        if value < least:
            raise pytest.UsageError(f"{FLAG[dest]} must be at least {least}, got {value}")
    if option.contract_concurrency > 64:
        raise pytest.UsageError(f"{FLAG['contract_concurrency']} must be at most 64, got {option.contract_concurrency}")
    if bool(option.contract_client_cert) != bool(option.contract_client_key) and option.contract_client_key:
        raise pytest.UsageError(f"{FLAG['contract_client_key']} needs {FLAG['contract_client_cert']}")
    for dest in ("contract_client_cert", "contract_client_key", "contract_ca_bundle"):
        path = getattr(option, dest)
        if path and not Path(path).is_file():
            raise pytest.UsageError(f"{FLAG[dest]}: no such file: {path}")


def path_taken_for_tests(config: pytest.Config) -> str:
    """The one-line usage error when pytest took a path option's value for a test path.

    pytest picks its rootdir, and so the ini file it reads (testpaths, markers, the waivers' default
    home), from the arguments that name existing paths, before it knows a plugin's options: after a
    space (``--contract-report-dir out``) an existing ``out`` counts, and the session is rooted at it or
    at the folder above both it and the invocation's.  Where that left pytest with no ini file, the
    session is not the one asked for; the ``=`` form avoids it.
    """
    if config.inipath is not None:
        return ""
    args = [str(arg) for arg in config.invocation_params.args]
    for option in OPTIONS:
        if option.metavar not in ("FILE", "DIR"):
            continue
        for name, value in itertools.pairwise(args):
            path = Path(config.invocation_params.dir, value)
            if name == option.flag and path.exists():  # rooted at it, or at a folder above it and the checkout
                return (
                    f"pytest took {value} (the value of {name}) for a test path and rooted the session at "
                    f"{config.rootpath}: write {name}={value}"
                )
    return ""
