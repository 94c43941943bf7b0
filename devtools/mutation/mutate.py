"""Mutation testing of the reference server: does the contract suite notice each small fault planted in it?

    python -m devtools.mutation [--sample N] [--seed S] [--jobs N|auto] [--timeout S]

cosmic-ray plants one fault at a time in ``reference/app.py`` and ``reference/rules.py`` (the modules of
``reference/`` with store logic and the document's rules: ``variants.py`` is the knobs' data, whose
defaults all run at import, the rest serves sockets; the fault catalog lives in ``devtools/catalog``,
which the plain reference never runs and whose mutants would prove nothing), the contract suite judges
the mutated reference as a user would, and every mutant the suite passes must be classified in
``mutants.toml`` as equivalent or legitimate. Steps:

1. every mutant of the module (cosmic-ray's operators), into a session file (``--session``);
2. left out, each with its reason: the operator families that are noise here (``session.py``), and the
   mutants whose code the plain reference never evaluates while the suite runs (``reach.py``: the
   branches of variant knobs off for it, equivalent by construction);
3. ``--sample N --seed S``: N of the rest, drawn reproducibly (without it: all of them, the full run);
4. each mutant in a copy of the tree under a temporary folder (``mutant_runs.py``), ``--jobs`` at a time
   (one that does not compile is skipped there);
5. the counts, the score over the mutants that ran, and every unclassified survivor with its diff.

Exit: 0 every survivor classified; 1 an unclassified survivor (or the suite broke on a mutant);
2 a bad option, cosmic-ray missing, no git checkout, the module differs from git's HEAD, a malformed
classification file, another run on the same session file; 3 the unmutated reference is not judged
conformant; 130/143 interrupted (SIGINT/SIGTERM: the suites stop, every copy is restored and removed,
the checkout was never written).
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any, NoReturn

ROOT = Path(__file__).resolve().parents[2]
SOURCE = "src"
MODULES = ("petstore_contract/reference/app.py", "petstore_contract/reference/rules.py")  # under src/
DEFAULT_SEED = 20301205
DEFAULT_TIMEOUT = 180.0


class OneLineParser(argparse.ArgumentParser):
    """A bad option is one line on stderr and exit 2, not a usage screen or a traceback."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _jobs(text: str) -> int:
    return max(1, os.cpu_count() or 1) if text == "auto" else _positive_int(text)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 < value < 86400:
        raise argparse.ArgumentTypeError(f"must be between 0 and 86400 seconds, got {text}")
    return value


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = OneLineParser(prog="python -m devtools.mutation", description=__doc__.split("\n")[0])
    parser.add_argument("--sample", type=_positive_int, metavar="N", help="run N mutants drawn with --seed")
    parser.add_argument("--seed", type=_int, default=DEFAULT_SEED, help=f"the sample's seed (default {DEFAULT_SEED})")
    parser.add_argument(
        "--jobs", type=_jobs, default=1, metavar="N|auto", help="mutants at a time, each in its own copy (default 1)"
    )
    parser.add_argument(
        "--timeout", type=_seconds, default=DEFAULT_TIMEOUT, metavar="S", help="seconds per mutant (default 180)"
    )
    parser.add_argument("--session", type=Path, metavar="FILE", help="session file (default .mutate/session.sqlite)")
    parser.add_argument("--resume", action="store_true", help="run what the session has not run yet")
    parser.add_argument("--classification", type=Path, metavar="FILE", help="classified survivors (mutants.toml)")
    args = parser.parse_args(argv)
    if args.resume and args.sample is not None:
        parser.error("--resume takes the session's own sample; leave out --sample")
    return args


class Interrupted(Exception):
    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


@contextlib.contextmanager
def interruptible() -> Iterator[None]:
    """SIGINT and SIGTERM raise Interrupted once; the clean-up after it is not interrupted again."""

    def handler(signum: int, frame: FrameType | None) -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise Interrupted(signum)

    previous = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for number, action in previous.items():
            signal.signal(number, action)


class Problem(Exception):
    """Why the run cannot go on, in one line, and its exit code."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.code = code


def git_bytes(root: Path, relative: str) -> bytes:
    """The file as git's HEAD has it."""
    try:
        done = subprocess.run(
            ["git", "-C", str(root), "show", f"HEAD:{relative}"], capture_output=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise Problem(f"cannot read {relative} from git: {exc}") from None
    if done.returncode != 0:
        raise Problem(f"needs a git checkout of the project with {relative} committed ({root})")
    return done.stdout


def unchanged(root: Path, pristine: dict[str, bytes]) -> list[str]:
    """The mutated modules of the checkout that differ from git's HEAD."""
    return [rel for rel, data in pristine.items() if (root / rel).read_bytes() != data]


@dataclass
class Tally:
    generated: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    outcomes: Counter[str] = field(default_factory=Counter)
    survivors: list[tuple[Any, Any]] = field(default_factory=list)  # (Mutant, MutantKey)
    errors: list[Any] = field(default_factory=list)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if importlib.util.find_spec("cosmic_ray") is None:
        print("error: cosmic-ray is not installed: pip install -e '.[dev]'", file=sys.stderr)
        return 2
    started = time.monotonic()
    try:
        with interruptible():
            return run(args, started)
    except Problem as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.code
    except Interrupted as exc:
        print(f"interrupted ({exc}): the suites were stopped, every copy restored and removed", file=sys.stderr)
        return 128 + exc.signum


def run(args: argparse.Namespace, started: float) -> int:
    from devtools.mutation import classification

    root = ROOT
    relatives = [f"{SOURCE}/{m}" for m in MODULES]
    pristine = {rel: git_bytes(root, rel) for rel in relatives}
    changed = unchanged(root, pristine)
    if changed:
        raise Problem(f"{', '.join(changed)} differs from git's HEAD: commit or stash it, then mutate")
    try:
        known = classification.load(args.classification or classification.FILE)
    except classification.ClassificationError as exc:
        raise Problem(str(exc)) from None
    db_path = (args.session or root / ".mutate" / "session.sqlite").resolve()
    with session_lock(db_path):
        return run_session(args, root, db_path, pristine, known, started)


@contextlib.contextmanager
def session_lock(db_path: Path) -> Iterator[None]:
    """One run per session file: two would interleave their results (and their baselines)."""
    db_path.parent.mkdir(parents=True, exist_ok=True)
    with open(db_path.with_suffix(".lock"), "w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise Problem(f"another mutation run is using {db_path}; wait for it or pass --session") from None
        yield


def run_session(
    args: argparse.Namespace, root: Path, db_path: Path, pristine: dict[str, bytes], known: Any, started: float
) -> int:
    from devtools.mutation import session

    meta_path = db_path.with_suffix(".json")
    meta = {"modules": {r: hashlib.sha256(d).hexdigest() for r, d in pristine.items()}, "sample": args.sample}
    meta["seed"] = args.seed if args.sample else None
    if args.resume:
        previous = json.loads(meta_path.read_text(encoding="utf-8")) if meta_path.exists() else None
        if previous is None or not db_path.exists():
            raise Problem(f"--resume: no session at {db_path}")
        if previous["modules"] != meta["modules"]:
            raise Problem("--resume: the module changed since the session was made; start a new session")
    else:
        prepare(args, root, db_path, list(pristine))
        meta_path.write_text(json.dumps(meta, indent=1), encoding="utf-8")
    try:
        execute(args, root, db_path, pristine)
    finally:
        changed = unchanged(root, pristine)
        if changed:  # never written by this tool: someone edited it meanwhile
            print(f"warning: {', '.join(changed)} changed during the run (not by this tool)", file=sys.stderr)
    with session.open_db(db_path) as db:
        mutants = session.mutants(db)
    return report(mutants, known, root, args, time.monotonic() - started, full=meta["sample"] is None)


def prepare(args: argparse.Namespace, root: Path, db_path: Path, relatives: list[str]) -> None:
    """A new session: every mutant, the noise and the unreached left out, the sample drawn."""
    from devtools.mutation import mutant_runs, reach, session

    generated = session.create(db_path, [root / r for r in relatives])
    with session.open_db(db_path) as db:
        excluded = session.exclude_operators(db)
        print(f"{generated} mutants; measuring what the reference executes under the suite ...", file=sys.stderr)
        try:
            executed = reach.measure(root / SOURCE, list(MODULES), mutant_runs.SUITE_ARGS, timeout=args.timeout * 5)
        except reach.ReachError as exc:
            raise Problem(str(exc), code=3) from None
        sources = {m: (root / SOURCE / m).read_text(encoding="utf-8") for m in MODULES}
        where = reach.Reach(executed, sources)
        prefix = SOURCE + "/"
        unreached = session.exclude_unreached(db, root, lambda p, s, e: where.reached(p.removeprefix(prefix), s, e))
        kept = session.sample(db, root, args.sample, args.seed) if args.sample else None
    left = generated - excluded - unreached
    print(
        f"{excluded} excluded operators, {unreached} not executed by the reference, "
        f"{left if kept is None else kept} to run",
        file=sys.stderr,
    )


def execute(args: argparse.Namespace, root: Path, db_path: Path, pristine: dict[str, bytes]) -> None:
    """Run every pending mutant, ``--jobs`` at a time, each worker in its own copy of the tree."""
    from devtools.mutation import mutant_runs, session

    with session.open_db(db_path) as db:
        todo = session.pending(db, root)
    if not todo:
        return
    base = Path(tempfile.mkdtemp(prefix="petstore-mutate-"))
    processes = mutant_runs.Processes()
    workers: list[mutant_runs.Worker] = []
    pool = ThreadPoolExecutor(max_workers=args.jobs)
    try:
        workers = [mutant_runs.Worker(root, base, n, pristine) for n in range(min(args.jobs, len(todo)))]
        print(f"workers in {base}: {len(workers)} copies of the tree, the checkout is never written", file=sys.stderr)
        if not all(w.serves_copy() for w in workers):
            raise Problem("a suite started in a worker's copy does not import the copy's reference (PYTHONPATH)")
        baseline = workers[0].run_suite(args.timeout, processes)
        print(f"baseline (unmutated, as each mutant runs): {baseline.line()}", file=sys.stderr)
        if baseline.label != mutant_runs.SURVIVED or not baseline.tests:
            raise Problem(f"the unmutated reference is not judged conformant: {baseline.line()}", code=3)
        idle = list(workers)
        queue = list(todo)
        running: dict[Future[Any], tuple[Any, mutant_runs.Worker]] = {}
        done_count = 0
        with session.open_db(db_path) as db:
            while queue or running:
                while queue and idle:
                    item, worker = queue.pop(0), idle.pop()
                    running[pool.submit(worker.run, item, args.timeout, processes, baseline.tests)] = (item, worker)
                finished, _ = wait(list(running), timeout=1.0, return_when=FIRST_COMPLETED)
                for future in finished:
                    item, worker = running.pop(future)
                    idle.append(worker)
                    result = future.result()  # a GuardError stops the run: a copy did not come back
                    db.set_result(item.job_id, result)
                    done_count += 1
                    spec = item.mutations[0]
                    print(
                        f"[{done_count}/{len(todo)}] {spec.definition_name or '-'} line {spec.start_pos[0]} "
                        f"{spec.operator_name} #{spec.occurrence}: {result.output or result.worker_outcome}",
                        file=sys.stderr,
                        flush=True,
                    )
    except mutant_runs.GuardError as exc:
        raise Problem(str(exc), code=1) from None
    finally:
        processes.stop_all()
        pool.shutdown(wait=True, cancel_futures=True)
        for worker in workers:
            for path in worker.clean():
                print(f"restored {path} from git", file=sys.stderr)
        shutil.rmtree(base, ignore_errors=True)


def report(
    mutants: list[Any], known: dict[Any, Any], root: Path, args: argparse.Namespace, seconds: float, full: bool
) -> int:
    from devtools.mutation import classification, mutant_runs, session

    tally = Tally(generated=len(mutants))
    for mutant in mutants:
        result = mutant.result
        if result is None:
            tally.skipped["not run yet (interrupted: --resume runs it)"] += 1
        elif result.worker_outcome == "skipped":
            tally.skipped[str(result.output).split(":")[0].split(" (")[0]] += 1
        elif result.worker_outcome != "normal":
            tally.outcomes[mutant_runs.ERROR] += 1
            tally.errors.append(mutant)
        else:
            label = mutant_runs.label_of(result.output)
            tally.outcomes[label] += 1
            if label == mutant_runs.SURVIVED:
                spec = mutant.spec
                module = session.relative(root, spec.module_path).removeprefix(f"{SOURCE}/petstore_contract/")
                key = classification.key_from_diff(module, spec.definition_name, spec.operator_name, result.diff or "")
                tally.survivors.append((mutant, key))
            elif label == mutant_runs.ERROR:
                tally.errors.append(mutant)
    kinds = Counter(known[key].kind for _, key in tally.survivors if key in known)
    unclassified = [(m, k) for m, k in tally.survivors if k not in known]
    run_count = sum(tally.outcomes.values())
    out = tally.outcomes
    equivalent, legitimate = kinds["equivalent"], kinds["legitimate"]
    judged = run_count - equivalent - legitimate
    score = f"{100 * out['killed'] / judged:.1f} %" if judged else "n/a"
    skipped = ", ".join(f"{n} {why}" for why, n in sorted(tally.skipped.items())) or "none"
    lines = [
        f"mutants generated: {tally.generated} ({', '.join(MODULES)})",
        f"skipped: {sum(tally.skipped.values())} ({skipped})",
        f"run: {run_count}",
        f"killed: {out['killed']}",
        f"survived: {out['survived']} ({out['survived'] - len(unclassified)} classified, "
        f"{len(unclassified)} unclassified)",
        f"inconclusive/timeout: {out['inconclusive']} inconclusive (exit 6), {out['timeout']} timeout, "
        f"{out['error']} suite errors",
        f"equivalent/legitimate (classified survivors): {equivalent} equivalent, {legitimate} legitimate",
        f"mutation score: {score} = killed {out['killed']} / (run {run_count} - equivalent {equivalent} "
        f"- legitimate {legitimate})",
        f"wall time: {seconds:.0f} s ({seconds / 60:.1f} min), {args.jobs} job{'s' if args.jobs > 1 else ''}",
    ]
    print("\n".join(lines))
    if full:
        surviving = {k for _, k in tally.survivors}
        stale = [k for k in known if k not in surviving]
        if stale:
            print(f"note: {len(stale)} classified mutants did not survive this run (stale entries in mutants.toml):")
            for key in stale:
                print(f"  {key.function}: {key.operator}: {key.line!r} -> {key.mutant!r}")
    for mutant, key in unclassified:
        print(f"\nUNCLASSIFIED SURVIVOR: {key.function} line {mutant.spec.start_pos[0]} {key.operator}")
        print(mutant.result.diff)
        print(classification.stub(key))
    for mutant in tally.errors:
        print(f"\nSUITE ERROR on {mutant.spec.definition_name} line {mutant.spec.start_pos[0]}: {mutant.result.output}")
        print(mutant.result.diff or "")
    if run_count == 0 and tally.generated and not tally.skipped.get("not run yet (interrupted: --resume runs it)"):
        print("note: no mutant ran")
    return 1 if unclassified or tally.errors else 0
