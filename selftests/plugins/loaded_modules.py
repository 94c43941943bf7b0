"""A pytest plugin for the seed self-test: which of the suite's modules are loaded once the run is configured.

Loaded into a suite run with ``-p loaded_modules`` (this folder on PYTHONPATH); its ``pytest_configure`` runs
after the contract plugin's, before set-up or any test draws a case, and writes the file of every loaded
module of the ``petstore_contract`` package, one a line, to the file named by ``LOADED_MODULES_OUT``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    out = os.environ.get("LOADED_MODULES_OUT")
    if not out:
        return
    files = {getattr(module, "__file__", None) for module in list(sys.modules.values())}
    ours = sorted(f for f in files if f and f"{os.sep}petstore_contract{os.sep}" in f)
    Path(out).write_text("".join(f"{f}\n" for f in ours), encoding="utf-8")
