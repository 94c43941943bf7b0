"""Where the suite's files are: the spec's data files and the contract tests.

Apart from ``spec.py`` (which loads the document with jsonschema and PyYAML), so that the plugin can
tell whether a session runs the suite without importing them.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path


def data_file(name: str) -> Path:
    """A file of spec/: shipped in the wheel as package data, read from the checkout otherwise.

    An editable install does not apply the wheel's force-include, so the checkout is the fallback.
    """
    shipped = files("petstore_contract") / "data" / name
    if shipped.is_file():
        return Path(str(shipped))
    return Path(__file__).resolve().parents[3] / "spec" / name


def suite_dir() -> Path:
    """The contract tests: the package's ``suite`` when installed from a wheel, else tests/ of the checkout."""
    shipped = files("petstore_contract") / "suite"
    if shipped.is_dir():
        return Path(str(shipped))
    return Path(__file__).resolve().parents[3] / "tests"
