"""python -m petstore_contract.reference: serve the reference Pet Store on loopback.

The API key comes from PETSTORE_API_KEY (never the command line); without it a random
key is made and printed once, so that a person trying the suite can copy it.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import secrets
import sys
from collections.abc import Callable
from typing import NoReturn

import uvicorn
from starlette.applications import Starlette

from petstore_contract.interface.document import INT64_MAX, INT64_MIN
from petstore_contract.reference.asgi import build_app
from petstore_contract.reference.server import bind_loopback
from petstore_contract.reference.variants import REFERENCE, Variant

PROG = "python -m petstore_contract.reference"
# Bounds of the numeric knobs: option dest -> (lowest, highest).
BOUNDS: dict[str, tuple[int | float, int | float]] = {
    "preload": (0, 1_000_000),
    "latency_ms": (0, 60_000),
    "page_cap": (1, 100),
    "first_id": (INT64_MIN, INT64_MAX),
    "background_every": (1, 1_000_000),
    "throttle_every": (0, 1_000_000),
    "rate_limit": (0, 1_000_000),
}
# The knobs that set the Variant field of their own name (--latency-ms and --rate-limit convert).
SAME_NAMED = (
    "preload",
    "newest_first",
    "page_cap",
    "first_id",
    "background_writer",
    "background_every",
    "throttle_every",
    "reject_every_key",
)


class OneLineParser(argparse.ArgumentParser):
    """Bad options get one line on stderr (and exit status 2), not the whole usage."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser(prog: str, description: str | None, knobs_title: str) -> OneLineParser:
    """--host, --port and the knobs: the options of every command that serves the reference (this one,
    and the checkout's catalog command, which adds its own)."""
    parser = OneLineParser(prog=prog, description=description)
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="port (0 picks a free one; default 8000)")
    knobs = parser.add_argument_group(knobs_title)
    knobs.add_argument("--preload", type=int, metavar="N", help="animals in the store at start-up")
    order = knobs.add_mutually_exclusive_group()
    order.add_argument(
        "--newest-first", dest="newest_first", action="store_true", default=None, help="list newest first"
    )
    order.add_argument("--oldest-first", dest="newest_first", action="store_false", help="list oldest first")
    knobs.add_argument("--page-cap", type=int, metavar="N", help="at most N animals a page (1-100)")
    knobs.add_argument("--first-id", type=int, metavar="N", help="the first id handed out (an int64)")
    knobs.add_argument("--latency-ms", type=float, metavar="MS", help="answer every request MS milliseconds late")
    knobs.add_argument(
        "--background-writer", action="store_true", default=None, help="add an animal every K-th request"
    )
    knobs.add_argument("--background-every", type=int, metavar="K", help="K for --background-writer (default 7)")
    knobs.add_argument("--throttle-every", type=int, metavar="N", help="answer every N-th request 429 (0: never)")
    knobs.add_argument(
        "--rate-limit", type=float, metavar="N", help="allow N requests a second, answer the others 429 (0: no limit)"
    )
    knobs.add_argument("--reject-every-key", action="store_true", default=None, help="answer every request 401")
    return parser


def checked(parser: OneLineParser, argv: list[str] | None) -> argparse.Namespace:
    """The options parsed, the port and every knob within its bounds (else one line and exit 2)."""
    args = parser.parse_args(argv)
    if not 0 <= args.port <= 65535:
        parser.error(f"--port must be between 0 and 65535, got {args.port}")
    for dest, (low, high) in BOUNDS.items():
        value = getattr(args, dest)
        if value is not None and not low <= value <= high:
            parser.error(f"--{dest.replace('_', '-')} must be between {low} and {high}, got {value}")
    return args


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    return checked(build_parser(PROG, __doc__, "knobs (adjust the reference's behaviour)"), argv)


def variant_of(args: argparse.Namespace, base: Variant = REFERENCE) -> Variant:
    """``base`` (the reference's choices unless told), adjusted by the knobs given on the command line."""
    changes: dict[str, object] = {name: getattr(args, name) for name in SAME_NAMED if getattr(args, name) is not None}
    if args.latency_ms is not None:
        changes["latency_seconds"] = args.latency_ms / 1000
    if args.rate_limit is not None:
        changes["rate_limit_per_second"] = args.rate_limit
    return dataclasses.replace(base, **changes) if changes else base  # type: ignore[arg-type]


def serve(
    args: argparse.Namespace,
    make_app: Callable[[str, Variant], Starlette],
    base: Variant = REFERENCE,
    more: str = "",
) -> int:
    """Serves ``make_app(key, variant)`` in the foreground until interrupted, after the banner: what is
    served (``base``'s name, "adjusted" when a knob changed it, then ``more``), its base URL, a made key."""
    key = os.environ.get("PETSTORE_API_KEY") or secrets.token_urlsafe(24)
    try:
        sock = bind_loopback(args.host, args.port)
    except OSError as exc:
        print(f"error: cannot listen on {args.host}:{args.port}: {exc.strerror}", file=sys.stderr)
        return 2
    host, port = sock.getsockname()[:2]
    variant = variant_of(args, base)
    adjusted = " (adjusted)" if variant is not base else ""
    print(f"Pet Store reference ({base.name}{adjusted}{more})", flush=True)
    print(f"base URL: http://{host}:{port}/v1", flush=True)
    if "PETSTORE_API_KEY" not in os.environ:
        print(f"API key (made for this run; export PETSTORE_API_KEY to choose one): {key}", flush=True)
    config = uvicorn.Config(make_app(key, variant), log_level="warning", lifespan="off")
    with contextlib.suppress(KeyboardInterrupt):
        uvicorn.Server(config).run(sockets=[sock])
    return 0


def main(argv: list[str] | None = None) -> int:
    return serve(parse_args(argv), build_app)


if __name__ == "__main__":
    sys.exit(main())
