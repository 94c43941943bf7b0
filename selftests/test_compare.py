"""``petstore-contract compare``, end to end: real runs against faulty and fixed servers, compared.

Four small runs (the credential table, about 2 s each): the reference, a server that sends no
challenge on GET /store/orders only, one that sends none anywhere, and that one again with another
seed.  The signatures of a violation must not depend on the seed; a violation on a new operation is
a regression even where the clause was already violated.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gatekit import CREDENTIALS, KEY, command, one_line, served, tool, write_json
from hosted import run_hosted
from petstore_contract.core.records import SCHEMA_VERSION

RUNS = {
    "fixed": (),
    "orders-only": ("--fault", "auth_orders_no_challenge"),
    "everywhere": ("--fault", "auth_no_challenge"),
}


@pytest.fixture(scope="module")
def summaries(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("compare")
    paths = {}
    for name, server in RUNS.items():
        with served(*server) as base_url:
            paths[name] = _run(folder / f"{name}.json", base_url)
            if name == "everywhere":
                paths["everywhere-seed"] = _run(folder / "everywhere-seed.json", base_url, "--contract-seed", "7")
    return paths


def _run(path: Path, base_url: str, *more: str) -> Path:
    run = run_hosted(base_url, KEY, *CREDENTIALS, *more, timeout=300)
    assert run.summary, run.output[-2000:]
    return write_json(path, run.summary)


def compare(base: Path, new: Path, *more: str) -> tuple[int, dict[str, Any]]:
    """``petstore-contract compare`` in this process: what it judges (``test_bad_input_is_one_line_and_exit_2``
    runs the console script)."""
    done = command("compare", str(base), str(new), "--format", "json", *more)
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)


def test_a_new_violation_is_a_regression(summaries: dict[str, Path]) -> None:
    code, result = compare(summaries["fixed"], summaries["everywhere"])
    assert code == 1
    assert [c["clause"] for c in result["regressed"]] == ["auth.challenge"]
    change = result["regressed"][0]
    assert (change["base"], change["new"]) == ("conforms", "violated")
    operations = {s["operation"] for s in change["new_signatures"]}
    assert operations == {"GET /pets", "POST /pets", "GET /pets/{petId}", "GET /store/orders"}
    assert {s["expectation"] for s in change["new_signatures"]} == {"bearer-challenge"}
    assert result["headline"].startswith("Regression: 1 MUST clause regressed (auth.challenge)")


def test_a_new_signature_on_a_violated_clause_is_a_regression(summaries: dict[str, Path]) -> None:
    code, result = compare(summaries["orders-only"], summaries["everywhere"])
    assert code == 1
    change = result["regressed"][0]
    assert (change["clause"], change["base"], change["new"]) == ("auth.challenge", "violated", "violated")
    new_operations = {s["operation"] for s in change["new_signatures"]}
    assert new_operations == {"GET /pets", "POST /pets", "GET /pets/{petId}"}, "GET /store/orders was there before"


def test_no_regression_when_a_violation_is_fixed(summaries: dict[str, Path], tmp_path: Path) -> None:
    code, result = compare(summaries["everywhere"], summaries["fixed"])
    assert code == 0 and not result["regressed"]
    assert [c["clause"] for c in result["fixed"]] == ["auth.challenge"]
    assert result["headline"].startswith("No regression")
    # Markdown, for the CI job summary: written to --out and appended to $GITHUB_STEP_SUMMARY.
    out, step_summary = tmp_path / "compare.md", tmp_path / "step-summary.md"
    args = (str(summaries["everywhere"]), str(summaries["fixed"]), "--out", str(out))
    done = tool("compare", *args, env={"GITHUB_STEP_SUMMARY": str(step_summary)})
    assert done.returncode == 0 and done.stdout.startswith("No regression"), done.stderr
    markdown = out.read_text(encoding="utf-8")
    assert "### Fixed (1)" in markdown and "`auth.challenge`" in markdown and "Regressed" not in markdown
    assert step_summary.read_text(encoding="utf-8") == markdown + "\n"


def test_signatures_do_not_depend_on_the_seed(summaries: dict[str, Path]) -> None:
    code, result = compare(summaries["everywhere"], summaries["everywhere-seed"])
    assert code == 0 and not result["regressed"]
    change = next(c for c in result["unchanged"] if c["clause"] == "auth.challenge")
    assert change["new_signatures"] == [] and change["base"] == "violated"


def test_the_same_run_twice_is_unchanged(summaries: dict[str, Path]) -> None:
    code, result = compare(summaries["fixed"], summaries["fixed"])
    assert code == 0
    assert not any(result[kind] for kind in ("regressed", "fixed", "newly_undecided", "changed"))


def test_newly_undecided_and_other_changes(summaries: dict[str, Path], tmp_path: Path) -> None:
    data = json.loads(summaries["fixed"].read_text(encoding="utf-8"))
    clause = next(c for c in data["clauses"] if c["outcome"] == "conforms")
    clause["outcome"] = "undecided"
    clause["notes"] = [{"clauses": [clause["id"]], "kind": "target", "reason": "timed out", "blocked_by": ""}]
    code, result = compare(summaries["fixed"], write_json(tmp_path / "undecided.json", data))
    assert code == 0 and [c["clause"] for c in result["newly_undecided"]] == [clause["id"]]
    code, result = compare(tmp_path / "undecided.json", summaries["fixed"])
    assert code == 0 and [c["clause"] for c in result["changed"]] == [clause["id"]]


def test_bad_input_is_one_line_and_exit_2(summaries: dict[str, Path], tmp_path: Path) -> None:
    good = str(summaries["fixed"])
    old = json.loads(summaries["fixed"].read_text(encoding="utf-8")) | {"schema_version": 1}
    cases = {
        "no such file": str(tmp_path / "missing.json"),
        "not JSON": str(_text(tmp_path / "broken.json", "{not json")),
        "schema version 1": str(write_json(tmp_path / "old.json", old)),
        "schema version 2": str(write_json(tmp_path / "v2.json", old | {"schema_version": 2})),
        "not a valid summary.json": str(
            write_json(tmp_path / "other.json", {"schema_version": SCHEMA_VERSION, "verdict": "x"})
        ),
    }
    for words, path in cases.items():
        done = tool("compare", good, path)
        assert done.returncode == 2 and words in one_line(done), (words, done.stderr)
    done = tool("compare", good)
    assert done.returncode == 2 and "NEW.json" in one_line(done)
    done = tool("compare", good, good, "--format", "yaml")
    assert done.returncode == 2 and "--format" in one_line(done)


def _text(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path
