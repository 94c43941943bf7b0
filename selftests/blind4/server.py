"""Start one round-4 entry's Pet Store server (the blind catalogs' command line).

    python selftests/blind4/server.py --list
    PETSTORE_API_KEY=secret python selftests/blind4/server.py --variant NAME --port 0 [--preload N]
    python selftests/blind4/server.py --check --variant NAME   # exit 0 when its runtime is installed

The server is its language's own process (``runtimes.py``); the first stdout line is its base URL
``http://127.0.0.1:PORT/v1``. It stops, with every process it started, when stdin closes or on
SIGTERM/SIGINT (exit 0). A bad option, a missing key, an unknown variant or a server that cannot start
(its language's runtime not installed, say): one line on stderr, exit 2.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import threading
from pathlib import Path
from typing import NoReturn

sys.path.insert(0, str(Path(__file__).resolve().parent))

import catalog
import runtimes


class OneLineParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        fail(message)


def fail(message: str) -> NoReturn:
    print(f"server.py: error: {message}", file=sys.stderr)
    sys.exit(2)


def main(argv: list[str]) -> int:
    parser = OneLineParser(prog="server.py")
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--variant")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--preload", type=int, default=0)
    parser.add_argument("--ignore-stdin", action="store_true")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    if args.list:
        for entry in catalog.ENTRIES:
            print(json.dumps({k: entry[k] for k in ("name", "kind", "quote", "description", "store")}))
        return 0
    if not args.variant:
        fail("--variant NAME is required (or --list)")
    entry = catalog.BY_NAME.get(args.variant)
    if entry is None:
        fail(f"unknown variant {args.variant!r}")
    if args.check:  # the scorer asks before it starts a server: a missing runtime is named, not a crash
        problem = runtimes.available(entry["language"])
        if problem:
            fail(problem)
        return 0
    if not 0 <= args.port <= 65535:
        fail("--port must be 0..65535")
    if not 0 <= args.preload <= 100_000:
        fail("--preload must be 0..100000")
    key = os.environ.get("PETSTORE_API_KEY", "")
    if not key:
        fail("PETSTORE_API_KEY is not set")

    try:
        server = runtimes.Running(entry["language"], entry["flags"], key, args.preload, args.port)
    except OSError as exc:
        fail(f"cannot serve {args.variant} on 127.0.0.1:{args.port}: {exc}".replace("\n", " "))

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    print(f"http://127.0.0.1:{server.port}/v1", flush=True)
    if not args.ignore_stdin:

        def watch_stdin() -> None:
            with contextlib.suppress(OSError, ValueError):
                while os.read(0, 4096):
                    pass
            stop.set()

        threading.Thread(target=watch_stdin, daemon=True).start()
    while not stop.wait(0.2):
        if server.process is not None and server.process.poll() is not None:
            break  # the language server died: the harness goes too, and the client sees the port closed
    server.stop()
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
