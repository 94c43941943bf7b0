"""The README is the user's guide: its clause table is the registry's, its first screen gives the two
commands CI runs, and it stays short.  Its links, and those of docs/, are checked in test_doc_links.py."""

from __future__ import annotations

import re
from pathlib import Path

from petstore_contract.interface.clauses import registry

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
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
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    first_screen = "\n".join(text.splitlines()[:25])
    selftests = ".venv/bin/python -m pytest selftests -n 2 --dist loadgroup\n"  # two workers: see conftest.py
    for command in (".venv/bin/python -m pytest\n", selftests):
        assert command in first_screen + "\n", command
        assert command.strip() in ci, f"{command.strip()} is not what .ci/run runs"
    assert "spec/interface.md" in first_screen, "the first screen names the interface document in the checkout"
    assert "../" not in first_screen, "the first screen points outside the repository"


def test_readme_is_a_short_users_guide() -> None:
    """Measurements, the code map and contributors' recipes live in docs/, not in the README."""
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 260, f"README.md has {len(lines)} lines: move detail to docs/"
