"""python -m devtools.catalog: serve the reference Pet Store on loopback with one of the catalog's
faults or compliant variants (run from the checkout).

The reference's own options and knobs (python -m petstore_contract.reference --help), plus
--variant, --fault and --list; the knobs adjust the chosen variant.  The API key comes from
PETSTORE_API_KEY, as for the reference.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from starlette.applications import Starlette

from devtools.catalog.faults import FAULTS
from devtools.catalog.faulty import catalog_app
from devtools.catalog.variants import UNJUDGEABLE, VARIANTS
from petstore_contract.reference.__main__ import build_parser, checked, serve
from petstore_contract.reference.variants import Variant

PROG = "python -m devtools.catalog"


def one_of(names: list[str], what: str) -> Callable[[str], str]:
    """An argparse type: one of ``names``, else a one-line error that does not list them all."""

    def check(value: str) -> str:
        if value not in names:
            raise argparse.ArgumentTypeError(f"invalid choice: {value!r} (--list shows the {len(names)} {what})")
        return value

    return check


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = build_parser(PROG, __doc__, "knobs (adjust the chosen --variant)")
    parser.add_argument(
        "--variant",
        type=one_of([*VARIANTS, *UNJUDGEABLE], "variants"),
        default="reference",
        metavar="NAME",
        help="a compliant variant (or an unjudgeable server: " + ", ".join(UNJUDGEABLE) + ")",
    )
    parser.add_argument(
        "--fault", type=one_of(list(FAULTS), "faults"), metavar="NAME", help="inject one named fault (see --list)"
    )
    parser.add_argument("--list", action="store_true", help="list the variants and faults, then exit")
    return checked(parser, argv)


def chosen(args: argparse.Namespace) -> Variant:
    """The variant --variant names, before the knobs adjust it."""
    return VARIANTS.get(args.variant) or UNJUDGEABLE[args.variant]


def describe() -> str:
    lines = ["variants:"]
    lines += [f"  {v.name:<24} {v.summary}" for v in VARIANTS.values()]
    lines.append("unjudgeable (not compliant, fault-free):")
    lines += [f"  {v.name:<24} {v.summary}" for v in UNJUDGEABLE.values()]
    lines.append("faults:")
    lines += [f"  {f.name:<34} [{f.clause}] {f.description}" for f in FAULTS.values()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.list:
        print(describe())
        return 0

    def make_app(key: str, variant: Variant) -> Starlette:
        return catalog_app(key, variant, args.fault)

    return serve(args, make_app, chosen(args), f", fault {args.fault}" if args.fault else "")


if __name__ == "__main__":
    sys.exit(main())
