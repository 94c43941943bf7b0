"""The README's clause table is the registry's: every clause, its level and why it may stay undecided."""

from __future__ import annotations

import re
from pathlib import Path

from petstore_contract.clauses import registry

README = Path(__file__).resolve().parents[1] / "README.md"
ROW = re.compile(r"^\| `(?P<id>[a-z.-]+)` \| (?P<section>[^|]+) \| (?P<level>MUST|SHOULD) \| (?P<ok>[a-z ,]*) \|")


def test_clause_table_matches_the_registry() -> None:
    rows = {m["id"]: m for m in map(ROW.match, README.read_text(encoding="utf-8").splitlines()) if m}
    clauses = registry()
    assert sorted(rows) == sorted(clauses), "the README's clause table and clauses.toml list different clauses"
    for cid, clause in clauses.items():
        assert rows[cid]["level"] == clause.level, cid
        assert rows[cid]["ok"].strip() == ", ".join(k.replace("_", " ") for k in clause.undecided_ok), cid


def test_first_screen_gives_the_two_commands_ci_runs() -> None:
    text = README.read_text(encoding="utf-8")
    ci = (Path(__file__).resolve().parents[1] / ".ci" / "run").read_text(encoding="utf-8")
    first_screen = "\n".join(text.splitlines()[:25])
    for command in (".venv/bin/python -m pytest\n", ".venv/bin/python -m pytest selftests\n"):
        assert command in first_screen + "\n", command
        assert command.strip() in ci, f"{command.strip()} is not what .ci/run runs"
