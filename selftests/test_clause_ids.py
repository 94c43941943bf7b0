"""Clause ids come from the registry: every ``CLAUSE_IDS.<name>`` the code reads is a clause of
clauses.toml, and no module of the product or of devtools writes a clause id as a bare string."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from petstore_contract.interface.clauses import CLAUSE_IDS, attribute_name, clause_id, registry

ROOT = Path(__file__).resolve().parents[1]
READ = ("src", "devtools", "tests", "selftests", "benchmarks")  # where a CLAUSE_IDS name may be read
TYPED = ("src/petstore_contract", "devtools", "tests")  # where no clause id is written as a bare string
HOME = ROOT / "src" / "petstore_contract" / "interface" / "clauses.py"


def _modules(folders: tuple[str, ...]) -> list[Path]:
    return sorted(path for folder in folders for path in (ROOT / folder).rglob("*.py") if ".venv" not in path.parts)


def _docstrings(tree: ast.AST) -> set[int]:
    kept: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                kept.add(id(first.value))
    return kept


def test_every_registry_name_the_code_reads_is_a_clause() -> None:
    names = {attribute_name(cid) for cid in registry()}
    unknown = [
        f"{path.relative_to(ROOT)}:{node.lineno}: CLAUSE_IDS.{node.attr}"
        for path in _modules(READ)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "CLAUSE_IDS"
        and node.attr not in names
    ]
    assert not unknown, "names clauses.toml does not hold:\n" + "\n".join(unknown)


def test_no_module_writes_a_clause_id_as_a_bare_string() -> None:
    ids = set(registry())
    bare = []
    for path in _modules(TYPED):
        if path == HOME:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = _docstrings(tree)
        bare += [
            f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and node.value in ids and id(node) not in docstrings
        ]
    assert not bare, "clause ids written as strings (CLAUSE_IDS.<name> names them):\n" + "\n".join(bare)


def test_a_name_or_an_id_the_registry_does_not_hold_raises() -> None:
    assert CLAUSE_IDS.create_reject_nothing_created == "create.reject.nothing-created"
    assert clause_id("list.found") == CLAUSE_IDS.list_found
    lost = "list_lost"  # read by name: the scan above would (rightly) report it written out
    with pytest.raises(AttributeError, match="no clause named 'list_lost'"):
        getattr(CLAUSE_IDS, lost)
    with pytest.raises(ValueError, match=r"no clause 'list\.lost'"):
        clause_id("list.lost")
