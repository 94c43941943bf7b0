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

import pytest

from petstore_contract.interface.spec import suite_dir
from petstore_contract.versions import version_line

# subcommand -> the module whose ``main(argv) -> int`` runs it (imported only when asked for)
COMMANDS = {
    "compare": "petstore_contract.commands.compare",
    "certify": "petstore_contract.commands.certify",
    "verify": "petstore_contract.commands.bundle",
    "replay": "petstore_contract.commands.replay",
}

USAGE = """\
usage: petstore-contract [pytest options]           the contract suite (pytest's options follow)
       petstore-contract --version                   the suite's version, with Schemathesis', Hypothesis' and pytest's
       petstore-contract compare BASE.json NEW.json  what regressed between two runs
       petstore-contract certify --product NAME --product-version V --out DIR [pytest options]
       petstore-contract verify DIR                  check a certification bundle
       petstore-contract replay DIR FINDING_ID       send a bundle's finding again and judge it
each subcommand takes --help
"""


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
        print(USAGE)  # then pytest's own help: every option of a suite run
    return int(pytest.main([*suite_arguments(), "-o", "junit_family=xunit1", "-p", "no:cacheprovider", *args]))


if __name__ == "__main__":
    raise SystemExit(main())
