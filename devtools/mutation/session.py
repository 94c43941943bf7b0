"""The mutation session: cosmic-ray's mutants of the reference, the ones left out and why, and the results.

Uses cosmic-ray's public modules only: ``cosmic_ray.commands.init`` (every mutant of the modules, one
work item each), ``cosmic_ray.work_db`` (the session file) and ``cosmic_ray.work_item`` (its records).
A mutant left out gets a result with ``worker_outcome=SKIPPED`` and the reason in ``output``, as
cosmic-ray's own filters do; ``cosmic-ray exec`` would then pass it over too.  Mind that cosmic-ray's
``cr-rate``/``cr-report`` count such items as killed: the score here is computed over normal results.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cosmic_ray.commands import init as cosmic_init
from cosmic_ray.work_db import WorkDB, use_db
from cosmic_ray.work_item import WorkerOutcome, WorkResult

# Operator families left out before anything runs, each with the reason it is noise here.
EXCLUDED_OPERATORS: tuple[tuple[str, str], ...] = (
    (
        r"^core/ReplaceBinaryOperator_.*_(BitOr|BitAnd|BitXor|LShift|RShift|Pow)$",
        # The arithmetic in app.py works on ids, counts and int64 bounds (+ 1, % 3, 2**63): a bitwise,
        # shift or power operator in its place is one more wrong number, a fault the +, -, *, /, //
        # and % replacements of the same operator already plant; six more suite runs per operator.
        "a bitwise, shift or power operator in place of arithmetic: one more wrong number, as the arithmetic "
        "replacements plant",
    ),
    (
        r"^core/ReplaceComparisonOperator_(Eq|NotEq|Lt|LtE|Gt|GtE)_(Is|IsNot)$",
        # `status is 404`, `name is "sold"`: CPython caches small ints and interns short strings, so
        # whether identity agrees with equality is an accident of the interpreter, not a server fault.
        "identity in place of a value comparison: on CPython's cached ints and interned strings an accident "
        "of the interpreter",
    ),
    (
        r"^core/ReplaceComparisonOperator_(Is_Eq|IsNot_NotEq)$",
        # Everything app.py compares with `is` is None or a sentinel object(); neither defines __eq__,
        # so `== None` is `is None`: equivalent by construction.
        "`is` to `==` on None and a plain sentinel: equivalent by construction",
    ),
)

UNREACHED = "not executed by the reference"
EXCLUDED = "excluded operator"
NOT_SAMPLED = "not sampled"


@dataclass(frozen=True)
class Mutant:
    """A work item as this tool sees it: where, which operator, which occurrence, and its result."""

    item: Any  # cosmic_ray.work_item.WorkItem
    result: Any | None  # cosmic_ray.work_item.WorkResult

    @property
    def spec(self) -> Any:
        return self.item.mutations[0]

    @property
    def job_id(self) -> str:
        return str(self.item.job_id)


def relative(root: Path, module_path: Path | str) -> str:
    path = Path(module_path)
    return (path.relative_to(root) if path.is_absolute() else path).as_posix()


def sort_key(root: Path) -> Callable[[Any], tuple[tuple[str, str, int], ...]]:
    """Work items in an order that does not depend on their job ids (fresh uuid4s on every init)."""

    def key(item: Any) -> tuple[tuple[str, str, int], ...]:
        return tuple((relative(root, m.module_path), m.operator_name, int(m.occurrence)) for m in item.mutations)

    return key


def create(db_path: Path, modules: Iterable[Path]) -> int:
    """A fresh session holding every mutant of ``modules`` (absolute paths); how many."""
    db_path.parent.mkdir(parents=True, exist_ok=True)
    with use_db(str(db_path), WorkDB.Mode.create) as db:
        # No operator takes arguments among those used here: every operator with its default instance.
        cosmic_init(list(modules), db, {})
        return int(db.num_work_items)


def skip(db: Any, items: Iterable[Any], reason: str) -> int:
    ids = [item.job_id for item in items]
    if ids:
        db.set_multiple_results(ids, WorkResult(output=reason, worker_outcome=WorkerOutcome.SKIPPED))
    return len(ids)


def exclude_operators(db: Any) -> int:
    """Mark the mutants of the excluded operator families skipped; how many."""
    chosen = []
    for item in db.pending_work_items:
        name = item.mutations[0].operator_name
        for pattern, reason in EXCLUDED_OPERATORS:
            if re.search(pattern, name):
                chosen.append((item, reason))
                break
    for item, reason in chosen:
        skip(db, [item], f"{EXCLUDED}: {reason}")
    return len(chosen)


def exclude_unreached(db: Any, root: Path, reached: Callable[[str, tuple[int, int], tuple[int, int]], bool]) -> int:
    """Mark skipped the mutants whose code the plain reference never evaluated under the suite; how many."""
    dead = [
        item
        for item in db.pending_work_items
        if not reached(
            relative(root, item.mutations[0].module_path),
            tuple(item.mutations[0].start_pos),
            tuple(item.mutations[0].end_pos),
        )
    ]
    return skip(db, dead, f"{UNREACHED}: no instruction of the code it mutates ran while the suite judged it")


def sample(db: Any, root: Path, size: int, seed: int) -> int:
    """Keep ``size`` pending mutants drawn with ``seed`` (reproducible); mark the rest skipped; how many kept."""
    pending = sorted(db.pending_work_items, key=sort_key(root))
    keep = {item.job_id for item in random.Random(seed).sample(pending, min(size, len(pending)))}
    skip(db, [i for i in pending if i.job_id not in keep], f"{NOT_SAMPLED} (--sample {size} --seed {seed})")
    return len(keep)


def pending(db: Any, root: Path) -> list[Any]:
    """Mutants still to run, in a fixed order (so that a run's log reads the same every time)."""
    return sorted(db.pending_work_items, key=sort_key(root))


def mutants(db: Any) -> list[Mutant]:
    done = {item.job_id: Mutant(item, result) for item, result in db.completed_work_items}
    return [done.get(item.job_id, Mutant(item, None)) for item in db.work_items]


def open_db(db_path: Path) -> Any:
    return use_db(str(db_path), WorkDB.Mode.open)
