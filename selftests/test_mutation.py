"""Mutation testing of the reference (``python -m devtools.mutation``).

The fast tests pin the parts that decide what runs and what a survivor is: the seeded sample, the
classification file and its keys, the reach filter, the command line.  ``test_sampled_mutants_are_killed
_or_classified`` (tier 2) runs a fixed seeded sample of 36 mutants through the contract suite and fails
when one survives without a classification in ``mutants.toml``.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import proof_table
from devtools.mutation import classification, mutate, reach, session

ROOT = Path(__file__).resolve().parents[1]
APP = "src/petstore_contract/reference/app.py"
CLI = [sys.executable, "-m", "devtools.mutation"]
# devtools is not installed: the tool runs from the checkout, whatever the working directory.
CLI_ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH"))))}
# The sample: fixed, so that a failure names the same mutants on every machine (36 mutants, tier 2: at
# about 9 s of CPU a mutant, the sampled run is longer than tier 1 can give).
SAMPLE, CI_SEED, CI_JOBS = 36, 20301205, 2


def git_app() -> bytes:
    done = subprocess.run(["git", "-C", str(ROOT), "show", f"HEAD:{APP}"], capture_output=True, timeout=60, check=True)
    return done.stdout


# -- the seeded sample ----------------------------------------------------------------------------

SMALL_MODULE = textwrap.dedent(
    """\
    LIMIT = 100


    def page(items, limit=None, wanted=None):
        if limit is None:
            limit = 20
        if not 1 <= limit <= LIMIT:
            raise ValueError(limit)
        chosen = [i for i in items if wanted is None or i["status"] == wanted]
        return chosen[: min(limit, 50)]
    """
)


def sampled(tmp_path: Path, name: str, size: int, seed: int) -> set[tuple[str, str, int]]:
    (tmp_path / "small.py").write_text(SMALL_MODULE, encoding="utf-8")
    db_path = tmp_path / f"{name}.sqlite"
    total = session.create(db_path, [tmp_path / "small.py"])
    assert total > size
    with session.open_db(db_path) as db:
        assert session.sample(db, tmp_path, size, seed) == size
        left = session.pending(db, tmp_path)
        skipped = [m for m in session.mutants(db) if m.result is not None]
    assert len(skipped) == total - size
    assert all(m.result.output.startswith(session.NOT_SAMPLED) for m in skipped)
    return {key for item in left for key in session.sort_key(tmp_path)(item)}


def test_sample_is_reproducible_across_sessions(tmp_path: Path) -> None:
    # Job ids are fresh uuid4s on every init: the same seed must still pick the same mutants.
    first = sampled(tmp_path, "one", 5, 7)
    assert first == sampled(tmp_path, "two", 5, 7)
    assert first != sampled(tmp_path, "three", 5, 8)
    assert {path for path, _, _ in first} == {"small.py"}  # relative paths: independent of the checkout's place


def test_operator_filter_names_its_reason(tmp_path: Path) -> None:
    (tmp_path / "small.py").write_text("X = 2 ** 3 + 1\nZ = 9\nY = X == Z\n", encoding="utf-8")
    db_path = tmp_path / "ops.sqlite"
    session.create(db_path, [tmp_path / "small.py"])
    with session.open_db(db_path) as db:
        excluded = session.exclude_operators(db)
        names = {m.spec.operator_name: m.result for m in session.mutants(db)}
    assert excluded > 0
    assert names["core/ReplaceBinaryOperator_Add_Pow"].output.startswith(session.EXCLUDED)
    assert names["core/ReplaceComparisonOperator_Eq_Is"].output.startswith(session.EXCLUDED)
    assert names["core/ReplaceBinaryOperator_Add_Sub"] is None  # kept: arithmetic for arithmetic
    assert names["core/ReplaceComparisonOperator_Eq_NotEq"] is None


# -- the classification file ----------------------------------------------------------------------

DIFF = """\
--- a/src/petstore_contract/reference/app.py
+++ b/src/petstore_contract/reference/app.py
@@ -75,3 +75,3 @@
         challenge = self.variant.www_authenticate
-        if presented and challenge == REFERENCE.www_authenticate:
+        if not presented and challenge == REFERENCE.www_authenticate:
             # RFC 6750 §3.1: error details only when a credential was presented.
"""


def test_key_is_the_function_operator_and_lines_not_a_position() -> None:
    key = classification.key_from_diff("reference/app.py", "challenge", "core/AddNot", DIFF)
    assert key == classification.MutantKey(
        "reference/app.py",
        "challenge",
        "core/AddNot",
        "if presented and challenge == REFERENCE.www_authenticate:",
        "if not presented and challenge == REFERENCE.www_authenticate:",
    )
    moved = DIFF.replace("@@ -75,3 +75,3 @@", "@@ -175,3 +175,3 @@").replace("        ", "    ")
    assert classification.key_from_diff("reference/app.py", "challenge", "core/AddNot", moved) == key


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "mutants.toml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


ENTRY = """\
    [[survivor]]
    function = "challenge"
    operator = "core/AddNot"
    line = 'if presented and challenge == REFERENCE.www_authenticate:'
    mutant = '  if not presented and challenge == REFERENCE.www_authenticate:  '
"""


def test_classification_matches_by_key_with_own_or_shared_reason(tmp_path: Path) -> None:
    key = classification.key_from_diff("reference/app.py", "challenge", "core/AddNot", DIFF)
    own = classification.load(write(tmp_path, ENTRY + '    class = "equivalent"\n    reason = "no client can tell"\n'))
    assert own[key].kind == "equivalent"
    shared = write(
        tmp_path,
        '[reasons.off]\nclass = "legitimate"\nreason = "the document is silent"\n\n' + ENTRY + '    because = "off"\n',
    )
    assert classification.load(shared)[key].kind == "legitimate"
    other = classification.MutantKey(key.module, "error", key.operator, key.line, key.mutant)
    assert other not in classification.load(shared)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ('    class = "harmless"\n    reason = "x"\n', "class must be one of"),
        ('    class = "equivalent"\n    reason = " "\n', "reason is empty"),
        ('    because = "nowhere"\n', "no shared reason"),
        (
            '    class = "equivalent"\n    reason = "x"\n' + ENTRY + '    class = "equivalent"\n    reason = "y"\n',
            "twice",
        ),
    ],
)
def test_malformed_classification_is_one_line(tmp_path: Path, extra: str, message: str) -> None:
    with pytest.raises(classification.ClassificationError, match=message):
        classification.load(write(tmp_path, ENTRY + extra))


def test_committed_classification_file_loads() -> None:
    known = classification.load()
    assert all(c.kind in classification.CLASSES and c.reason.strip() for c in known.values())


# -- the reach filter -----------------------------------------------------------------------------

TRACED = textwrap.dedent(
    """\
    def has(name):
        return False


    def judge(token, key):
        if has("prefix") and token and key.startswith(token):
            return 1
        size = 50 if has("big") else 20
        if token == key:
            return 2
        return [c for c in token if c == "z"] or size


    RESULT = judge("az", "cd")
    """
)


def test_reach_counts_only_code_that_ran(tmp_path: Path) -> None:
    path = tmp_path / "traced.py"
    path.write_text(TRACED, encoding="utf-8")
    tracer = reach.Tracer([str(path)])
    tracer.install()
    try:
        exec(compile(TRACED, str(path), "exec"), {})
    finally:
        tracer.remove()
    where = reach.Reach({"traced.py": tracer.spans()[os.path.realpath(path)]}, {"traced.py": TRACED})
    lines = TRACED.splitlines()

    def at(line: int, text: str) -> bool:
        column = lines[line - 1].index(text)
        return where.reached("traced.py", (line, column), (line, column + len(text)))

    assert at(6, 'has("prefix")')  # the first operand runs
    assert not at(6, "token")  # the operands after a False one do not, though the line ran
    assert not at(6, "key.startswith")
    assert not at(7, "1")
    assert not at(8, "50") and at(8, "20")  # only the branch taken
    assert at(9, "==") and not at(10, "2")
    assert at(11, '"z"')  # the comprehension's condition ran per element
    assert not at(11, "size")  # the list was not empty: `or size` never ran
    assert at(14, "judge")  # module-level code runs at import


# -- the command line -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [["--sample", "0"], ["--jobs", "two"], ["--timeout", "-1"], ["--seed", "x"], ["--resume", "--sample", "3"]],
)
def test_bad_option_is_one_line(args: list[str]) -> None:
    done = subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=60, check=False, env=CLI_ENV)
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert done.stdout == ""


def test_missing_cosmic_ray_is_one_line(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    real = mutate.importlib.util.find_spec
    monkeypatch.setattr(mutate.importlib.util, "find_spec", lambda name: None if name == "cosmic_ray" else real(name))
    assert mutate.main(["--sample", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cosmic-ray is not installed" in err


# -- the sampled run (CI) -------------------------------------------------------------------------


@pytest.mark.tier_2  # tier 1 pins the parts that decide what runs (above)
def test_sampled_mutants_are_killed_or_classified(tmp_path: Path, pytestconfig: pytest.Config) -> None:
    assert (ROOT / APP).read_bytes() == git_app(), "app.py differs from HEAD: the run would refuse to start"
    sample = SAMPLE
    started = time.monotonic()
    args = ["--sample", str(sample), "--seed", str(CI_SEED), "--jobs", str(CI_JOBS)]
    done = subprocess.run(
        [*CLI, *args, "--session", str(tmp_path / "ci.sqlite")],
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
        cwd=tmp_path,
        env=CLI_ENV,
    )
    seconds = time.monotonic() - started
    pytestconfig.stash[proof_table.MUTATION_KEY] = proof_table.mutation_figures(done.stdout, done.returncode, sample)
    report = done.stdout + "\n" + done.stderr[-4000:]
    assert done.returncode == 0, f"exit {done.returncode} after {seconds:.0f} s:\n{report}"
    counts = dict(line.split(": ", 1) for line in done.stdout.splitlines() if ": " in line and line[0].islower())
    uncompiled = re.search(r"(\d+) does not compile", counts["skipped"])
    assert int(counts["run"]) + int(uncompiled[1] if uncompiled else 0) == sample, report
    assert int(counts["killed"]) > 0, report  # the mutants were served: a suite that saw none would kill none
    assert (ROOT / APP).read_bytes() == git_app()
    print(f"{sample} sampled mutants in {seconds:.0f} s:\n{done.stdout}")


@pytest.mark.tier_2
def test_sigterm_restores_and_removes_the_copies(tmp_path: Path) -> None:
    process = subprocess.Popen(
        [*CLI, "--sample", "4", "--session", str(tmp_path / "term.sqlite")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env=CLI_ENV,
    )
    base = None
    try:
        assert process.stderr is not None
        deadline = time.monotonic() + 300
        for line in process.stderr:
            if line.startswith("workers in "):
                base = Path(line.split("workers in ", 1)[1].split(":")[0].strip())
            if line.startswith("baseline"):
                break
            assert time.monotonic() < deadline
        time.sleep(2.0)  # the first mutant is on disk in the worker's copy, its suite running
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 128 + signal.SIGTERM, err
    assert "interrupted (SIGTERM)" in err
    assert base is not None and not base.exists()
    assert (ROOT / APP).read_bytes() == git_app()


def test_postponed_annotations_are_never_reached(tmp_path: Path) -> None:
    source = "from __future__ import annotations\n\n\ndef f(x: int | None) -> str | None:\n    return None\n\n\nf(1)\n"
    path = tmp_path / "annotated.py"
    path.write_text(source, encoding="utf-8")
    tracer = reach.Tracer([str(path)])
    tracer.install()
    try:
        exec(compile(source, str(path), "exec"), {"__name__": "annotated"})
    finally:
        tracer.remove()
    where = reach.Reach({"a.py": tracer.spans()[os.path.realpath(path)]}, {"a.py": source})
    line = source.splitlines()[3]
    bars = [i for i, c in enumerate(line) if c == "|"]
    assert len(bars) == 2
    assert not any(where.reached("a.py", (4, i), (4, i + 1)) for i in bars)  # the def ran; its annotations did not
    assert where.reached("a.py", (5, 11), (5, 15))  # `None` of the return statement


def test_one_run_per_session(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "one.sqlite"
    with mutate.session_lock(db.resolve()):
        assert mutate.main(["--session", str(db)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "another mutation run is using" in err
