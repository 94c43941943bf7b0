"""The README is the user's guide: its clause table is the registry's, its first screen gives the two
commands CI runs, it stays short, and every relative link of the README and docs/ resolves."""

from __future__ import annotations

import re
from pathlib import Path

from petstore_contract.interface.clauses import registry

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
ROW = re.compile(r"^\| `(?P<id>[a-z.-]+)` \| (?P<section>[^|]+) \| (?P<level>MUST|SHOULD) \| (?P<ok>[a-z ,]*) \|")
# [text](target) and ![alt](target); a target with a scheme (https:, mailto:) is not checked.
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)


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


def anchors(path: Path) -> set[str]:
    """GitHub's heading anchors of a Markdown file: lower case, punctuation dropped, spaces to hyphens."""
    found: set[str] = set()
    for line in FENCE.sub("", path.read_text(encoding="utf-8")).splitlines():
        heading = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not heading:
            continue
        text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading[1])  # a link keeps its text
        slug = re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")
        n, candidate = 0, slug
        while candidate in found:
            n += 1
            candidate = f"{slug}-{n}"
        found.add(candidate)
    return found


def relative_links(path: Path) -> list[str]:
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    text = re.sub(r"`[^`\n]*`", "", text)  # code spans hold no links
    return [t for t in LINK.findall(text) if not re.match(r"^[a-z][a-z0-9+.-]*:", t)]


def test_every_relative_link_resolves() -> None:
    broken = []
    checked = 0
    for doc in [README, *DOCS]:
        for target in relative_links(doc):
            file_part, _, anchor = target.partition("#")
            resolved = (doc.parent / file_part).resolve() if file_part else doc
            where = f"{doc.relative_to(ROOT)}: ({target})"
            checked += 1
            if not resolved.exists():
                broken.append(f"{where}: no file {file_part}")
            elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
                broken.append(f"{where}: no heading #{anchor} in {resolved.relative_to(ROOT)}")
            elif ROOT not in resolved.parents and resolved != ROOT:
                broken.append(f"{where}: outside the repository")
    assert checked >= 40, f"only {checked} relative links found: is the link pattern still right?"
    assert not broken, "\n".join(broken)


def test_docs_are_linked_from_the_readme() -> None:
    """Every page of docs/ can be reached from the README."""
    linked = {(README.parent / t.partition("#")[0]).resolve() for t in relative_links(README)}
    assert [d.name for d in DOCS if d.resolve() not in linked] == []
