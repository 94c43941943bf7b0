"""Start one catalog entry's Pet Store server (harness entry point).

    python selftests/blind2/server.py --list
    PETSTORE_API_KEY=secret python selftests/blind2/server.py --variant NAME --port 0 [--preload N]

The first stdout line is the base URL ``http://127.0.0.1:PORT/v1`` (the
gateway's when a gateway fronts the app). The server stops, with everything it
started, when its stdin closes or on SIGTERM/SIGINT.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import sys
import threading
from pathlib import Path
from typing import Any, NoReturn

sys.path.insert(0, str(Path(__file__).resolve().parent))

import catalog


class OneLineParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        print(f"server.py: error: {message}", file=sys.stderr)
        sys.exit(2)


def fail(message: str) -> NoReturn:
    print(f"server.py: error: {message}", file=sys.stderr)
    sys.exit(2)


def start_app(entry: dict[str, Any], key: str, port: int, preload: int) -> tuple[Any, int]:
    """The Starlette app on SQLite, served by uvicorn in a thread."""
    import uvicorn
    from app import build_app
    from store import SqliteStore

    flags = frozenset(entry["flags"])
    order = "id DESC" if "newest_first" in flags else "id ASC"
    store = SqliteStore(flags, order)
    store.preload(preload)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    config = uvicorn.Config(
        build_app(flags, key, store),
        log_level="critical",
        access_log=False,
        lifespan="off",
        timeout_keep_alive=30,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        if not thread.is_alive():
            fail("uvicorn did not start")
        threading.Event().wait(0.01)
    return server, sock.getsockname()[1]


def main(argv: list[str]) -> int:
    parser = OneLineParser(prog="server.py", add_help=True)
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--variant")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--preload", type=int, default=0)
    parser.add_argument("--ignore-stdin", action="store_true")
    args = parser.parse_args(argv)
    if args.list:
        for entry in catalog.ENTRIES:
            row = {k: entry[k] for k in ("name", "kind", "quote", "description", "store")}
            print(json.dumps(row, ensure_ascii=False))
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

    stop = threading.Event()
    closers: list[Any] = []
    style = entry["style"]
    flags = frozenset(entry["flags"])
    try:
        if style == "hand":
            from handmade import serve_hand

            httpd = serve_hand(flags, key, args.port, args.preload)
            closers.append(httpd.shutdown)
            port = httpd.server_address[1]
        elif style == "app":
            server, port = start_app(entry, key, args.port, args.preload)
            closers.append(lambda: setattr(server, "should_exit", True))
        elif style == "gateway":
            from proxy import serve_gateway

            server, upstream = start_app(entry, key, 0, args.preload)
            closers.append(lambda: setattr(server, "should_exit", True))
            httpd = serve_gateway(flags, upstream, args.port)
            closers.insert(0, httpd.shutdown)
            port = httpd.server_address[1]
        else:
            fail(f"unknown style {style!r}")
    except OSError as exc:
        fail(f"cannot listen on 127.0.0.1:{args.port}: {exc}")

    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    print(f"http://127.0.0.1:{port}/v1", flush=True)

    if not args.ignore_stdin:

        def watch_stdin() -> None:
            try:
                while os.read(0, 4096):
                    pass
            except (OSError, ValueError):
                pass
            stop.set()

        threading.Thread(target=watch_stdin, daemon=True).start()
    while not stop.wait(0.2):
        pass
    for close in closers:
        with contextlib.suppress(Exception):
            close()
    sys.stdout.flush()
    os._exit(0)  # daemon threads (uvicorn, the gateway, stdin) end with the process


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
