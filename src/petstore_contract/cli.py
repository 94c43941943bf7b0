"""``petstore-contract [pytest options]``: the contract suite from any directory, as installed."""

from __future__ import annotations

import sys

import pytest


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    return int(
        pytest.main(
            ["--pyargs", "petstore_contract.suite", "-o", "junit_family=xunit1", "-p", "no:cacheprovider", *args]
        )
    )


if __name__ == "__main__":
    raise SystemExit(main())
