"""python -m petstore_contract.reference: serve the reference Pet Store on loopback.

The API key comes from PETSTORE_API_KEY (never the command line); without it a random
key is made and printed once, so that a person trying the suite can copy it.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import secrets
import sys

import uvicorn

from petstore_contract.reference.app import build_app
from petstore_contract.reference.faults import FAULTS
from petstore_contract.reference.server import bind_loopback
from petstore_contract.reference.variants import VARIANTS


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m petstore_contract.reference", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="port (0 picks a free one; default 8000)")
    parser.add_argument("--variant", choices=sorted(VARIANTS), default="reference", help="a compliant variant")
    parser.add_argument("--fault", choices=sorted(FAULTS), help="inject one named fault")
    parser.add_argument("--list", action="store_true", help="list the variants and faults, then exit")
    args = parser.parse_args(argv)
    if not 0 <= args.port <= 65535:
        parser.error(f"--port must be between 0 and 65535, got {args.port}")
    return args


def describe() -> str:
    lines = ["variants:"]
    lines += [f"  {v.name:<16} {v.summary}" for v in VARIANTS.values()]
    lines.append("faults:")
    lines += [f"  {f.name:<34} [{f.clause}] {f.description}" for f in FAULTS.values()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.list:
        print(describe())
        return 0
    key = os.environ.get("PETSTORE_API_KEY") or secrets.token_urlsafe(24)
    try:
        sock = bind_loopback(args.host, args.port)
    except OSError as exc:
        print(f"error: cannot listen on {args.host}:{args.port}: {exc.strerror}", file=sys.stderr)
        return 2
    host, port = sock.getsockname()[:2]
    print(f"Pet Store reference ({args.variant}{', fault ' + args.fault if args.fault else ''})", flush=True)
    print(f"base URL: http://{host}:{port}/v1", flush=True)
    if "PETSTORE_API_KEY" not in os.environ:
        print(f"API key (made for this run; export PETSTORE_API_KEY to choose one): {key}", flush=True)
    app = build_app(key, VARIANTS[args.variant], args.fault)
    config = uvicorn.Config(app, log_level="warning", lifespan="off")
    with contextlib.suppress(KeyboardInterrupt):
        uvicorn.Server(config).run(sockets=[sock])
    return 0


if __name__ == "__main__":
    sys.exit(main())
