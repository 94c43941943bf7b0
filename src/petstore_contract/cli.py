"""``petstore-contract``: the installed suite from any directory, and the tools that read its results.

- ``petstore-contract [pytest options]``: the contract suite (``pytest --pyargs petstore_contract.suite``);
- ``petstore-contract compare BASE.json NEW.json``: what regressed between two runs (``compare``);
- ``petstore-contract certify ... --out DIR``: a certification bundle (``certify``);
- ``petstore-contract verify DIR``: checks a bundle's hashes and recomputes its verdict (``bundle``);
- ``petstore-contract replay DIR FINDING_ID``: a bundle's finding sent and judged again (``replay``).

A subcommand is recognised only as the first argument, so every pytest command line works as before.
"""

from __future__ import annotations

import importlib
import sys

import pytest

# subcommand -> the module whose ``main(argv) -> int`` runs it (imported only when asked for)
COMMANDS = {
    "compare": "petstore_contract.commands.compare",
    "certify": "petstore_contract.commands.certify",
    "verify": "petstore_contract.commands.bundle",
    "replay": "petstore_contract.commands.replay",
}


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in COMMANDS:
        command: int = importlib.import_module(COMMANDS[args[0]]).main(args[1:])
        return command
    return int(
        pytest.main(
            ["--pyargs", "petstore_contract.suite", "-o", "junit_family=xunit1", "-p", "no:cacheprovider", *args]
        )
    )


if __name__ == "__main__":
    raise SystemExit(main())
