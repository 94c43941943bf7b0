"""The versions that make a run's requests: the suite's and its judge's.

The same seed sends the same requests only with the same Schemathesis, Hypothesis and pytest (their
releases change what a strategy draws and in which order tests run), so ``--version``, summary.json and
the reports name all four.
"""

from __future__ import annotations

from importlib import metadata

from petstore_contract import __version__

JUDGE = ("schemathesis", "hypothesis", "pytest")
NAMES = {"schemathesis": "Schemathesis", "hypothesis": "Hypothesis", "pytest": "pytest"}


def judge_versions() -> dict[str, str]:
    """Each distribution of the judge -> its installed version ("" where it cannot be read)."""
    found = {}
    for name in JUDGE:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = ""
    return found


def version_facts() -> dict[str, str]:
    """The run's facts that name the judge: ``schemathesis_version``, ``hypothesis_version``, ``pytest_version``."""
    return {f"{name}_version": version for name, version in judge_versions().items()}


def version_line() -> str:
    """``petstore-contract 0.1.0 (Schemathesis 4.32.5, Hypothesis 6.170.17, pytest 9.1.1)``"""
    judge = ", ".join(f"{NAMES[name]} {version or 'not installed'}" for name, version in judge_versions().items())
    return f"petstore-contract {__version__} ({judge})"
