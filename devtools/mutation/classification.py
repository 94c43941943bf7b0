"""Survivors of the mutation run that are not faults, each with its reason (``mutants.toml``).

A survivor is either *equivalent* (no black-box client can tell it from the reference: the reason says
why) or *legitimate* (it behaves differently, but the interface document leaves that open: the reason
quotes the gap).  Anything else that survives is a fault the suite misses.

An entry is keyed by what stays true across unrelated edits of the mutated file: the file, the
function holding the mutation, cosmic-ray's operator, the source line as it is and the line as the
mutant has it (whitespace at either end ignored).  Not by cosmic-ray's occurrence number or a line
number, which move whenever code is added above.  Two identical lines in one function mutated the same
way share one entry: they are the same mutant of the same code.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CLASSES = ("equivalent", "legitimate")
FILE = Path(__file__).with_name("mutants.toml")
DEFAULT_MODULE = "reference/app.py"


@dataclass(frozen=True)
class MutantKey:
    module: str  # path under src/petstore_contract, e.g. reference/app.py
    function: str  # the innermost def or class holding the mutation; "" at module level
    operator: str  # cosmic-ray's operator name, e.g. core/NumberReplacer
    line: str  # the original source line(s), stripped, joined by newlines
    mutant: str  # the same line(s) as the mutant has them


@dataclass(frozen=True)
class Classification:
    key: MutantKey
    kind: str  # equivalent | legitimate
    reason: str


class ClassificationError(Exception):
    """The classification file is malformed (one line: where and what)."""


def key_from_diff(module: str, function: str | None, operator: str, diff: str) -> MutantKey:
    """The key of a mutant from its unified diff: the removed lines and the added lines."""
    removed, added = [], []
    for text in diff.splitlines():
        if text.startswith(("---", "+++", "@@")):
            continue
        if text.startswith("-"):
            removed.append(text[1:].strip())
        elif text.startswith("+"):
            added.append(text[1:].strip())
    return MutantKey(module, function or "", operator, "\n".join(removed), "\n".join(added))


def load(path: Path = FILE) -> dict[MutantKey, Classification]:
    """Every classified survivor by its key; a malformed entry or a duplicate key is an error.

    An entry gives its ``class`` and ``reason`` itself, or names a shared one with ``because``
    (a table under ``[reasons]`` with ``class`` and ``reason``): many survivors are equivalent for
    one and the same reason, which is then written, and reviewed, once.
    """
    try:
        data: dict[str, Any] = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ClassificationError(f"{path}: {exc}") from None
    shared: dict[str, Any] = data.get("reasons", {})
    for name, row in shared.items():
        _check(row, f"{path.name}: reasons.{name}")
    found: dict[MutantKey, Classification] = {}
    for number, row in enumerate(data.get("survivor", []), start=1):
        where = f"{path.name}: survivor #{number}"
        missing = [f for f in ("function", "operator", "line", "mutant") if f not in row]
        if missing:
            raise ClassificationError(f"{where}: missing {', '.join(missing)}")
        if "because" in row:
            if row["because"] not in shared:
                raise ClassificationError(f"{where}: no shared reason {row['because']!r} under [reasons]")
            verdict = shared[row["because"]]
        else:
            verdict = row
            _check(verdict, where)
        key = MutantKey(
            row.get("module", DEFAULT_MODULE),
            row["function"],
            row["operator"],
            _strip(row["line"]),
            _strip(row["mutant"]),
        )
        if key in found:
            raise ClassificationError(
                f"{where}: the same mutant is classified twice ({key.operator} in {key.function})"
            )
        found[key] = Classification(key, verdict["class"], verdict["reason"])
    return found


def _check(row: dict[str, Any], where: str) -> None:
    if row.get("class") not in CLASSES:
        raise ClassificationError(f"{where}: class must be one of {', '.join(CLASSES)}, got {row.get('class')!r}")
    if not str(row.get("reason", "")).strip():
        raise ClassificationError(f"{where}: the reason is empty")


def _strip(text: str) -> str:
    return "\n".join(part.strip() for part in text.strip().splitlines())


def stub(key: MutantKey) -> str:
    """A TOML entry to fill in for an unclassified survivor."""
    return "\n".join(
        [
            "[[survivor]]",
            *([f"module = {_toml(key.module)}"] if key.module != DEFAULT_MODULE else []),
            f"function = {_toml(key.function)}",
            f"operator = {_toml(key.operator)}",
            f"line = {_toml(key.line)}",
            f"mutant = {_toml(key.mutant)}",
            'class = "equivalent"  # or "legitimate"; or instead of both: because = "<a [reasons] name>"',
            'reason = ""',
        ]
    )


def _toml(text: str) -> str:
    """A TOML basic string (JSON's escaping is valid TOML for these characters)."""
    return json.dumps(text, ensure_ascii=False)
