"""Every module of the suite loaded before the first case is drawn, so that one seed draws the same cases.

Hypothesis (6.170, as constraints.txt pins it) sometimes draws a string or a number from the constants
in the source of the process's *local* modules: every module in ``sys.modules`` whose file lies outside
site-packages and the standard library (and outside folders named ``test``/``tests``). It takes that
pool from ``sys.modules`` afresh whenever the number of loaded modules changes, so which cases a seed
draws depends on which local modules are loaded at each draw. An editable install of the suite is
local: were its own modules loaded as a run needs them (the reference server for an embedded run,
``cli.py`` and ``commands/`` for ``petstore-contract certify``, pytest-html's hooks for ``--html``, a
module first imported mid-run), the same seed would draw other cases in a run of another kind, and in a
process that had run another kind before. So a contract run loads them all first, in every process of
the run (controller and xdist workers). Hypothesis has no public setting that takes its draws off the
loaded modules (checked against 6.170); what remains is the process's other local modules: the
project's own ``conftest.py`` files and plugins outside site-packages (docs/options.md, "What a seed fixes").

Loading them all costs about 40 ms before the first case (measured 38-41 ms after the plugin's own imports:
the reference server, the CLI and its commands, pytest-html's hooks, which a run against a URL does not
otherwise load).
"""

from __future__ import annotations

import contextlib
import importlib
import pkgutil
from pathlib import Path

import petstore_contract

# Not loaded: a ``__main__`` module runs its program on import; the wheel's copy of the contract tests
# (``petstore_contract.suite``) is pytest's to import, and Hypothesis leaves test modules out anyway.
SKIPPED = ("petstore_contract.suite",)


def suite_modules() -> list[str]:
    """The names of the package's modules, in a fixed order, without the ones not loaded (``SKIPPED``)."""
    names: list[str] = []
    folders = [(petstore_contract.__path__, "petstore_contract.")]
    while folders:
        path, prefix = folders.pop()
        for found in pkgutil.iter_modules(path, prefix):
            skipped = found.name in SKIPPED or found.name.rsplit(".", 1)[-1] == "__main__"
            if skipped:
                continue
            names.append(found.name)
            if found.ispkg:
                folders.append(([str(Path(path[0]) / found.name.rsplit(".", 1)[-1])], found.name + "."))
    return sorted(names)


def load_every_module() -> None:
    for name in suite_modules():
        # A module whose optional dependency is missing (pytest-html's hooks without pytest-html) is one
        # no run of this environment loads either.
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
