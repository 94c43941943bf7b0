"""Start one round-3 entry's Pet Store server (the blind catalogs' command line).

    python selftests/blind3/server.py --list
    PETSTORE_API_KEY=secret python selftests/blind3/server.py --variant NAME --port 0 [--preload N]

The first stdout line is the base URL ``http://127.0.0.1:PORT/v1`` (nginx's for an entry behind
nginx). The server stops, with everything it started, when its stdin closes or on SIGTERM/SIGINT.
A bad option, a missing key, an unknown variant or a server that cannot start: one line on stderr, exit 2.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

sys.path.insert(0, str(Path(__file__).resolve().parent))

import catalog


class OneLineParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        fail(message)


def fail(message: str) -> NoReturn:
    print(f"server.py: error: {message}", file=sys.stderr)
    sys.exit(2)


def start(entry: dict[str, Any], key: str, port: int, preload: int) -> tuple[int, list[Callable[[], None]]]:
    """The entry's app (behind nginx when it has a proxy); its port and its closers, outermost first."""
    flags = frozenset(entry["flags"])
    module = importlib.import_module(f"{entry['framework']}_app")
    if entry["proxy"] != "nginx":
        app = module.serve(flags, key, preload, port)
        return app.port, [app.stop]
    from nginx import Nginx

    app = module.Running(flags, key, preload, 0)  # listening, not serving yet: nginx forks before any thread
    try:
        proxy = Nginx(app.port, port, flags)
    except OSError:
        app.stop()
        raise
    app.start()
    return proxy.port, [proxy.stop, app.stop]


def main(argv: list[str]) -> int:
    parser = OneLineParser(prog="server.py")
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--variant")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--preload", type=int, default=0)
    parser.add_argument("--ignore-stdin", action="store_true")
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
    if not 0 <= args.port <= 65535:
        fail("--port must be 0..65535")
    if not 0 <= args.preload <= 100_000:
        fail("--preload must be 0..100000")
    key = os.environ.get("PETSTORE_API_KEY", "")
    if not key:
        fail("PETSTORE_API_KEY is not set")

    try:
        port, closers = start(entry, key, args.port, args.preload)
    except (OSError, RuntimeError) as exc:
        fail(f"cannot serve {args.variant} on 127.0.0.1:{args.port}: {exc}".replace("\n", " "))

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    print(f"http://127.0.0.1:{port}/v1", flush=True)
    if not args.ignore_stdin:

        def watch_stdin() -> None:
            with contextlib.suppress(OSError, ValueError):
                while os.read(0, 4096):
                    pass
            stop.set()

        threading.Thread(target=watch_stdin, daemon=True).start()
    while not stop.wait(0.2):
        pass
    for close in closers:
        with contextlib.suppress(Exception):
            close()
    sys.stdout.flush()
    os._exit(0)  # the servers' daemon threads end with the process


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
