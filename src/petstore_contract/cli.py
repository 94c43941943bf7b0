"""``petstore-contract``: the installed suite from any directory, and the tools that read its results.

- ``petstore-contract [pytest options]``: the contract suite (``pytest --pyargs petstore_contract.suite``);
- ``petstore-contract --version``: the suite's version and the judge's (Schemathesis, Hypothesis, pytest);
- ``petstore-contract compare BASE.json NEW.json``: what regressed between two runs (``compare``);
- ``petstore-contract certify ... --out DIR``: a certification bundle (``certify``);
- ``petstore-contract verify DIR``: checks a bundle's hashes and recomputes its verdict (``bundle``);
- ``petstore-contract replay DIR FINDING_ID``: a bundle's finding sent and judged again (``replay``).

A subcommand is recognised only as the first argument, so every pytest command line works as before.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path

import pytest

from petstore_contract.interface.spec import suite_dir
from petstore_contract.plugin import options
from petstore_contract.versions import version_line

# subcommand -> the module whose ``main(argv) -> int`` runs it (imported only when asked for)
COMMANDS = {
    "compare": "petstore_contract.commands.compare",
    "certify": "petstore_contract.commands.certify",
    "verify": "petstore_contract.commands.bundle",
    "replay": "petstore_contract.commands.replay",
}

USAGE = """\
usage: petstore-contract [options] [pytest options]  the contract suite: a verdict, an exit code, reports/
       petstore-contract --version                   the suite's version, with Schemathesis', Hypothesis' and pytest's
       petstore-contract compare BASE.json NEW.json  what regressed between two runs
       petstore-contract certify --product NAME --product-version V --out DIR [pytest options]
       petstore-contract verify DIR                  check a certification bundle
       petstore-contract replay DIR FINDING_ID       send a bundle's finding again and judge it
each subcommand takes --help
"""

EXAMPLES = """\
examples:
  petstore-contract                                           the embedded reference server (no key needed)
  PETSTORE_API_KEY=... petstore-contract --base-url https://staging.example/v1 --junitxml=reports/junit.xml
  PETSTORE_STAGING_API_KEY=... petstore-contract --contract-target staging
exit: 0 conformant, 1 not conformant, 6 inconclusive (retry or alert), 2-5 pytest's own (4: a usage error)
"""


def targets_help(pyproject: Path) -> str:
    """The named targets a run from here can use, or how to declare one."""
    from petstore_contract.run.target import load_named_targets  # the run's modules load in a run only

    named = load_named_targets(pyproject)
    if not named:
        return (
            f"named targets (--contract-target NAME): none in {pyproject}; declare one there:\n"
            '  [tool.petstore_contract.targets.staging]\n  base-url = "https://staging.example/v1"\n'
            '  key-env = "PETSTORE_STAGING_API_KEY"\n  read-only = false\n'
        )
    rows = [
        f"  {t.name}: {t.base_url} (key in {t.key_env}, {'read-only' if t.read_only else 'read-write'})"
        for t in named.values()
    ]
    return f"named targets (--contract-target NAME), from {pyproject}:\n" + "\n".join(rows) + "\n"


def project_file(cwd: Path) -> Path:
    """The ``pyproject.toml`` whose targets a run from ``cwd`` reads (the one of pytest's rootdir): the
    nearest with pytest's settings above where pytest is pointed (the checkout's tests/ in an editable
    install, else ``cwd``), else the one in ``cwd``."""
    pointed = suite_arguments()
    start = Path(pointed[0]) if pointed[0] != "--pyargs" else cwd
    for folder in (start, *start.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file() and "[tool.pytest.ini_options]" in candidate.read_text(encoding="utf-8"):
            return candidate
    return cwd / "pyproject.toml"


def help_text(cwd: Path) -> str:
    """What ``--help`` prints before pytest's own help: the suite's options, its targets, examples."""
    return "\n".join(
        [USAGE, "the suite's options:", options.suite_help(), "", targets_help(project_file(cwd)), EXAMPLES]
    )


def suite_arguments() -> list[str]:
    """How pytest finds the suite: as the package ``petstore_contract.suite`` where the wheel put it there,
    else by its path.  An editable install does not apply the wheel's force-include (tests/ becomes
    ``suite`` only in the wheel), so there the checkout's tests/ are named by path, as ``certify`` does."""
    try:
        found = importlib.util.find_spec("petstore_contract.suite") is not None
    except ImportError:
        found = False
    return ["--pyargs", "petstore_contract.suite"] if found else [str(suite_dir())]


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in COMMANDS:
        command: int = importlib.import_module(COMMANDS[args[0]]).main(args[1:])
        return command
    if args in (["--version"], ["-V"]):
        print(version_line())
        return 0
    if args in (["--help"], ["-h"]):
        print(help_text(Path.cwd()))
        print("pytest's own options follow (the suite's among them, under 'Pet Store contract suite').\n")
    # Plain asserts, as the checkout's pyproject.toml (addopts) asks: an installed run judges as the
    # checkout's does, and pytest does not ask to rewrite this package, imported already by now (its
    # PytestAssertRewriteWarning in every installed run).
    plain = [] if any(arg.startswith("--assert") for arg in args) else ["--assert=plain"]
    base = [*suite_arguments(), "-o", "junit_family=xunit1", "-p", "no:cacheprovider", *plain]
    return int(pytest.main([*base, *args]))


if __name__ == "__main__":
    raise SystemExit(main())
