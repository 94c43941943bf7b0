"""What of the reference's code the plain reference evaluates while the contract suite runs against it once.

Part of ``reference/app.py`` and ``reference/rules.py`` is dead for the plain reference: every branch
of a variant knob that is off for it.  A mutant there cannot change a single answer (it is equivalent by
construction), so the mutation run skips it rather than spend a suite run on it.

Line coverage is too coarse for these files: ``if self.variant.unique_names and any(p.get("name") ==
name for p in self.pets.values()):`` is an executed line whose last operand never runs, and ``return
ABSENT if self.variant.default_status is None else self.variant.default_status`` runs only its second
branch.  So the server process records every *instruction* it executes in the traced files, with its source span
(``co_positions``, Python 3.11+), and a mutation counts as reached when an executed instruction lies
inside the smallest piece of code around it that is evaluated as a whole (a "unit"): its statement, an
operand of ``and``/``or`` after the first, a branch of ``x if c else y``, a comprehension's element or
condition, a lambda's body.  Sound: a unit that is evaluated executes at least one instruction that the
compiler located inside it, so a mutation judged unreached was never evaluated.  (An instruction that
only *spans* a unit, such as the jump of a whole ``a and b``, does not count for ``b``.)  An annotation
is never evaluated at all under ``from __future__ import annotations``: it is never reached.

``python -m devtools.mutation.reach FD OUT FILE...`` is the server process: the reference on
the inherited listening socket FD with its key in ``PETSTORE_API_KEY``, the FILEs traced from their
import on; when its stdin closes it stops and writes the executed spans to OUT (JSON).
"""

from __future__ import annotations

import ast
import json
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import threading
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from types import CodeType, FrameType
from typing import Any

# (line, column, end line, end column): lines from 1, columns in UTF-8 bytes from 0 (ast and co_positions).
Span = tuple[int, int, int, int]
KEY_ENV = "PETSTORE_API_KEY"
TRACED_PACKAGE = "petstore_contract.reference"
CHECKOUT = Path(__file__).resolve().parents[2]


# -- the server process ------------------------------------------------------------------------


class Tracer:
    """Records (code object, instruction offset) for every instruction run in the traced files."""

    def __init__(self, files: Iterable[str]) -> None:
        self.files = {os.path.realpath(f) for f in files}
        self.executed: dict[CodeType, set[int]] = defaultdict(set)
        self._wanted: dict[CodeType, bool] = {}

    def _local(self, frame: FrameType, event: str, arg: Any) -> Any:
        if event == "opcode":
            self.executed[frame.f_code].add(frame.f_lasti)
        return self._local

    def _global(self, frame: FrameType, event: str, arg: Any) -> Any:
        code = frame.f_code
        wanted = self._wanted.get(code)
        if wanted is None:
            wanted = self._wanted[code] = os.path.realpath(code.co_filename) in self.files
        if not wanted:
            return None
        frame.f_trace_opcodes = True  # again on every resumption of a coroutine: harmless
        return self._local

    def install(self) -> None:
        threading.settrace(self._global)
        sys.settrace(self._global)

    def remove(self) -> None:
        sys.settrace(None)
        threading.settrace(None)  # type: ignore[arg-type,unused-ignore]  # None: new threads untraced

    def spans(self) -> dict[str, list[Span]]:
        """Per traced file, the distinct source spans of the instructions that ran."""
        found: dict[str, set[Span]] = defaultdict(set)
        for code, offsets in self.executed.items():
            positions = list(code.co_positions())
            for offset in offsets:
                index = offset // 2  # f_lasti counts bytes; co_positions has one entry per 2-byte code unit
                if not 0 <= index < len(positions):
                    continue
                line, end_line, column, end_column = positions[index]
                if line is None or end_line is None or column is None or end_column is None:
                    continue
                found[os.path.realpath(code.co_filename)].add((line, column, end_line, end_column))
        return {path: sorted(spans) for path, spans in found.items()}


def _stop_when_stdin_closes(server: Any) -> None:
    while os.read(0, 1024):
        pass
    server.should_exit = True


def main(argv: list[str]) -> int:
    if len(argv) < 3 or not argv[0].isdigit() or KEY_ENV not in os.environ:
        print(
            f"usage: {KEY_ENV}=... python -m {__spec__.name if __spec__ else 'reach'} FD OUT FILE...", file=sys.stderr
        )
        return 2
    fd, out, files = int(argv[0]), Path(argv[1]), argv[2:]
    early = sorted(name for name in sys.modules if name.startswith(TRACED_PACKAGE + "."))
    if early:  # their module-level code would have run untraced: every line of it would look dead
        print(f"error: imported before tracing started: {', '.join(early)}", file=sys.stderr)
        return 3
    import uvicorn  # not traced: only the FILEs are, and the tracer looks at each code object once

    tracer = Tracer(files)
    tracer.install()
    from petstore_contract.reference.asgi import build_app
    from petstore_contract.reference.server import quiet_config

    server = uvicorn.Server(quiet_config(build_app(os.environ[KEY_ENV])))
    threading.Thread(target=_stop_when_stdin_closes, args=(server,), daemon=True).start()
    server.run(sockets=[socket.socket(fileno=fd)])
    tracer.remove()
    out.write_text(json.dumps({"python": sys.version.split()[0], "files": tracer.spans()}), encoding="utf-8")
    return 0


# -- units and the verdict "reached" ------------------------------------------------------------


def _span(node: ast.AST) -> Span | None:
    end_line, end_column = getattr(node, "end_lineno", None), getattr(node, "end_col_offset", None)
    if end_line is None or end_column is None:
        return None
    return (node.lineno, node.col_offset, end_line, end_column)  # type: ignore[attr-defined]


def units(source: str) -> tuple[list[Span], list[Span]]:
    """The pieces of code evaluated as a whole or not at all, and the annotations among them.

    Under ``from __future__ import annotations`` an annotation is never evaluated: the compiler
    stores its text as a string constant (an instruction located inside it runs at ``def`` time),
    so an annotation is never reached, whatever ran.
    """
    tree = ast.parse(source)
    found: list[ast.AST] = []
    annotations: list[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt):
            found.append(node)
        elif isinstance(node, ast.BoolOp):
            found += node.values[1:]  # evaluated only when the operands before them let it
        elif isinstance(node, ast.IfExp):
            found += (node.body, node.orelse)
        elif isinstance(node, ast.comprehension):
            found += node.ifs  # the first iterable runs with the expression; the rest per element
        elif isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
            found.append(node.elt)
            found += [g.iter for g in node.generators[1:]]
        elif isinstance(node, ast.DictComp):
            found += (node.key, node.value)
            found += [g.iter for g in node.generators[1:]]
        elif isinstance(node, ast.Lambda):
            found.append(node.body)
        if isinstance(node, ast.arg) and node.annotation is not None:
            annotations.append(node.annotation)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns is not None:
            annotations.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            annotations.append(node.annotation)
    postponed = any(
        isinstance(n, ast.ImportFrom) and n.module == "__future__" and any(a.name == "annotations" for a in n.names)
        for n in tree.body
    )
    strings = sorted({s for s in map(_span, annotations) if s is not None}) if postponed else []
    return sorted({s for s in map(_span, found) if s is not None} | set(strings)), strings


def _inside(inner: Span, outer: Span) -> bool:
    return outer[:2] <= inner[:2] and inner[2:] <= outer[2:]


@dataclass
class Reach:
    """Executed instruction spans per file (paths relative to the source root), and the units of each file."""

    executed: dict[str, list[Span]]
    sources: dict[str, str]

    def __post_init__(self) -> None:
        self._units: dict[str, list[Span]] = {}
        self._strings: dict[str, set[Span]] = {}
        for path, source in self.sources.items():
            found, strings = units(source)
            self._units[path], self._strings[path] = found, set(strings)
        self._by_line: dict[str, dict[int, list[Span]]] = {}
        for path, spans in self.executed.items():
            by_line: dict[int, list[Span]] = defaultdict(list)
            for span in spans:
                by_line[span[0]].append(span)
            self._by_line[path] = by_line

    def unit_of(self, path: str, mutation: Span) -> Span | None:
        """The innermost unit holding the mutation (None: none holds it; then it counts as reached)."""
        holding = [unit for unit in self._units[path] if _inside(mutation, unit)]
        return max(holding, key=lambda unit: (unit[0], unit[1], -unit[2], -unit[3])) if holding else None

    def reached(self, path: str, start: tuple[int, int], end: tuple[int, int]) -> bool:
        """Whether the plain reference evaluated the code at (line, character column) start..end."""
        mutation = (*byte_position(self.sources[path], start), *byte_position(self.sources[path], end))
        unit = self.unit_of(path, mutation)
        if unit is None:
            return True
        if unit in self._strings[path]:
            return False  # an annotation kept as a string, never evaluated
        by_line = self._by_line.get(path, {})
        return any(_inside(span, unit) for line in range(unit[0], unit[2] + 1) for span in by_line.get(line, ()))


def byte_position(source: str, position: tuple[int, int]) -> tuple[int, int]:
    """A (line, character column) position, as cosmic-ray (parso) gives it, in UTF-8 bytes like ast's."""
    line, column = position
    lines = source.splitlines()
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    return line, len(text[:column].encode("utf-8"))


# -- one measuring run ----------------------------------------------------------------------------


class ReachError(Exception):
    """The measuring run could not say what the reference executes (one line)."""


def measure(src: Path, files: list[str], suite_args: tuple[str, ...], timeout: float) -> dict[str, list[Span]]:
    """Run the suite once (``--base-url``) against a traced reference served from ``src``; spans per file.

    ``files`` are paths relative to ``src``.  The suite's verdict must be conformant: a reference the
    suite rejects cannot be mutation-tested.
    """
    from devtools.launcher import run_suite
    from petstore_contract.reference.sockets import bind_loopback

    key = secrets.token_urlsafe(24)
    sock = bind_loopback()
    port = sock.getsockname()[1]
    with tempfile.TemporaryDirectory(prefix="petstore-reach-") as tmp:
        out = Path(tmp) / "reach.json"
        # The served reference from ``src``; this module from the checkout's root (devtools is not installed).
        path = os.pathsep.join(filter(None, (str(src), str(CHECKOUT), os.environ.get("PYTHONPATH"))))
        command = [sys.executable, "-m", "devtools.mutation.reach", str(sock.fileno()), str(out)]
        process = subprocess.Popen(
            [*command, *(str(src / f) for f in files)],
            stdin=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            pass_fds=(sock.fileno(),),
            env={**os.environ, KEY_ENV: key, "PYTHONPATH": path, "PYTHONDONTWRITEBYTECODE": "1"},
        )
        try:
            run = run_suite(f"http://127.0.0.1:{port}/v1", key, *suite_args, timeout=timeout)
        finally:
            try:
                _, err = process.communicate(timeout=60)  # closes its stdin: the server stops and writes
            except subprocess.TimeoutExpired:
                process.kill()
                _, err = process.communicate()
            sock.close()
        if process.returncode != 0 or not out.exists():
            last = (err or b"").decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
            raise ReachError(f"the traced reference exited with code {process.returncode}: {last[0]}")
        if run.exit_code != 0:
            raise ReachError(f"the suite judged the unmutated reference {run.verdict} (exit {run.exit_code})")
        data = json.loads(out.read_text(encoding="utf-8"))
    by_real = {os.path.realpath(src / f): f for f in files}
    found: dict[str, list[Span]] = {}
    for path, spans in data["files"].items():
        if path in by_real:
            found[by_real[path]] = [(s[0], s[1], s[2], s[3]) for s in spans]
    return found


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
