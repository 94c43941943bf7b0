"""Which server a run checks, with which key, and whether it may write there.

One rule for the URL, first found wins (README, "Pointing the suite at a deployment"):

1. ``--base-url`` on the command line;
2. the named target's own variable, ``PETSTORE_<NAME>_BASE_URL`` (with ``--contract-target NAME``);
3. the named target's ``base-url`` in ``pyproject.toml``;
4. ``PETSTORE_BASE_URL``;
5. the embedded reference.

pytest-base-url's other sources (its ini ``base_url``, ``PYTEST_BASE_URL``) are another project's
settings (a web app's address for pytest-playwright, say): they never choose where the key goes.
Where one names another URL than the rule's, the run stops with one line naming both.
A named target's key variable and read-only default hold whichever URL wins.
The key always comes from the environment (``PETSTORE_API_KEY``, or the variable that a named
target names), never from the command line, where process lists and CI logs would show it.
"""

from __future__ import annotations

import difflib
import os
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

KEY_ENV = "PETSTORE_API_KEY"
URL_ENV = "PETSTORE_BASE_URL"


class TargetConfigError(Exception):
    """A target that cannot be used; the message is one line for the user."""


@dataclass(frozen=True)
class NamedTarget:
    name: str
    base_url: str
    key_env: str
    read_only: bool
    url_from: str = ""  # where base_url came from, for a message


@dataclass(frozen=True)
class Target:
    name: str
    base_url: str
    api_key: str = field(repr=False)  # never in a repr, a report or a log
    read_only: bool = False
    key_env: str = KEY_ENV  # the variable the key came from (xdist workers read it there)

    @property
    def mode(self) -> str:
        return "read-only" if self.read_only else "read-write"

    def describe(self) -> str:
        return f"{self.name} {self.base_url} ({self.mode})"


def load_named_targets(pyproject: Path) -> dict[str, NamedTarget]:
    """[tool.petstore_contract.targets.<name>] tables; <NAME>_BASE_URL in the environment overrides."""
    data: dict[str, Any] = {}
    if pyproject.is_file():
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    tables = data.get("tool", {}).get("petstore_contract", {}).get("targets", {})
    targets = {}
    for name, table in tables.items():
        variable = f"PETSTORE_{name.upper()}_BASE_URL"
        env_url = os.environ.get(variable)
        targets[name] = NamedTarget(
            name=name,
            base_url=env_url or table["base-url"],
            key_env=table.get("key-env", KEY_ENV),
            read_only=bool(table.get("read-only", False)),
            url_from=variable if env_url else f"the {name} target's base-url in {pyproject.name}",
        )
    return targets


def unknown_target(name: str, named: dict[str, NamedTarget], pyproject: Path) -> str:
    """The one line for a ``--contract-target`` that ``pyproject`` does not declare: what it declares, the
    name probably meant, or how to declare one."""
    if named:
        close = difflib.get_close_matches(name, named, n=1)
        meant = f"; did you mean --contract-target {close[0]}?" if close else ""
        return f"unknown --contract-target {name!r}; configured targets: {', '.join(sorted(named))}{meant}"
    upper = name.upper()
    return (
        f"unknown --contract-target {name!r}; configured targets: none in {pyproject}; define one there as "
        f'[tool.petstore_contract.targets.{name}] base-url = "https://.../v1" key-env = "PETSTORE_{upper}_API_KEY", '
        "or name the deployment with --base-url URL"
    )


PREFIX = "/v1"  # §9.2: "Paths are served under a /v1 prefix in both deployments."


def check_base_url(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise TargetConfigError(f"base URL {url!r} is not an http(s) URL with a host (e.g. https://staging.example/v1)")
    if parts.username or parts.password:
        raise TargetConfigError("base URL must not carry credentials; put the key in PETSTORE_API_KEY")
    if parts.query or parts.fragment:
        raise TargetConfigError(f"base URL {url!r} must not have a query or fragment")
    try:
        parts.port  # noqa: B018 - raises on a malformed port
    except ValueError:
        raise TargetConfigError(f"base URL {url!r} has a malformed port") from None
    if not parts.path.rstrip("/").endswith(PREFIX):
        # §1, §9.2: both deployments serve the paths under /v1, and their base addresses end in it.  A base
        # URL without it makes every path a 404: a mistyped setting, not a faulty service.
        meant = url.rstrip("/") + PREFIX
        raise TargetConfigError(
            f"base URL {url!r} does not end in {PREFIX}, as the document's base addresses do (§1, §9.2); "
            f"did you mean --base-url {meant}?"
        )
    return url.rstrip("/")


def resolve(
    *,
    base_url: str | None,
    target_name: str | None,
    read_only: bool,
    allow_writes: bool,
    pyproject: Path,
    foreign: Sequence[tuple[str, str]] = (),
) -> Target | None:
    """The configured target, or None for the embedded reference.

    ``base_url`` is ``--base-url`` as given on the command line; ``foreign`` holds pytest-base-url's
    other sources as (where, URL).  A named target keeps its key variable and its read-only default
    even when ``--base-url`` overrides its URL: ``--contract-target production`` never writes unless
    ``--contract-allow-writes`` says so, and never sends another environment's key.
    """
    if read_only and allow_writes:
        raise TargetConfigError("--contract-read-only and --contract-allow-writes contradict each other; choose one")
    named = load_named_targets(pyproject)
    if target_name is not None and target_name not in named:
        raise TargetConfigError(unknown_target(target_name, named, pyproject))
    chosen = named.get(target_name) if target_name is not None else None
    url, source = chosen_url(base_url, chosen)
    if not base_url:
        _refuse_foreign(url, source, foreign)
    if not url:
        return None
    key_env = chosen.key_env if chosen else KEY_ENV
    key = os.environ.get(key_env, "").strip()
    if not key:
        where = f"the {target_name} target" if chosen else f"the target {url}"
        state = "is not set" if key_env not in os.environ else "is empty"  # set, to nothing but blanks
        raise TargetConfigError(f"{key_env} {state}: {where} needs its API key in that variable")
    writes_off = read_only or (chosen is not None and chosen.read_only and not allow_writes)
    return Target(target_name or "custom", check_base_url(url), key, writes_off, key_env)


def chosen_url(base_url: str | None, chosen: NamedTarget | None) -> tuple[str | None, str]:
    """The rule's URL (None: the embedded reference) and where it came from."""
    if base_url:
        return base_url, "--base-url"
    if chosen is not None:
        return chosen.base_url, chosen.url_from
    if os.environ.get(URL_ENV):
        return os.environ[URL_ENV], URL_ENV
    return None, "the embedded reference"


def _refuse_foreign(url: str | None, source: str, foreign: Sequence[tuple[str, str]]) -> None:
    """A URL from pytest-base-url's other sources that is not the rule's: one line naming both."""
    for where, other in foreign:
        if other and (url is None or other.rstrip("/") != url.rstrip("/")):
            judged = f"{url} (from {source})" if url else "the embedded reference (no deployment named)"
            raise TargetConfigError(
                f"base URL conflict: {where} names {other}, but the suite would judge {judged}; "
                "pytest-base-url's settings never choose the suite's target: pass --base-url to choose"
            )
