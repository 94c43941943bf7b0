"""A TCP relay on loopback that puts a network's round trip between the suite and a target.

    python -m benchmarks.rtt_proxy --rtt-ms 100 --upstream 127.0.0.1:8000    # prints the port it listens on
    python -m benchmarks.rtt_proxy --rtt-ms 100 --suite 3 [-- -k "not x"]    # 3 suite runs through it, timed

The benchmark's ``--latencies`` delay each answer at the server, where a new connection costs nothing;
this relay delays the bytes themselves, half the round trip each way, and a new connection by a whole
round trip before its first byte is relayed (TCP's handshake), so that what a client pays for opening
connections shows (``transport/connections.py``: every write on a new connection).  Order is kept per
direction; nothing is read or changed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import secrets
import statistics
import threading
import time
from collections.abc import Iterator

CHUNK = 65536


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay: float) -> None:
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

    async def take() -> None:
        while chunk := await reader.read(CHUNK):
            await queue.put((loop.time() + delay, chunk))
        await queue.put((loop.time() + delay, b""))

    taking = asyncio.create_task(take())
    try:
        while True:
            due, chunk = await queue.get()
            await asyncio.sleep(max(0.0, due - loop.time()))
            if not chunk:
                break
            writer.write(chunk)
            await writer.drain()
    finally:
        taking.cancel()
        with contextlib.suppress(Exception):
            writer.close()


async def _relay(rtt: float, host: str, port: int, client: asyncio.StreamReader, out: asyncio.StreamWriter) -> None:
    back: asyncio.StreamWriter | None = None
    try:
        await asyncio.sleep(rtt)  # the handshake's round trip
        try:
            upstream, back = await asyncio.open_connection(host, port)
        except OSError:
            return
        await asyncio.gather(_pipe(client, back, rtt / 2), _pipe(upstream, out, rtt / 2), return_exceptions=True)
    finally:  # also when the relay stops mid-connection: both ends see it closed
        for writer in (out, back):
            if writer is not None:
                with contextlib.suppress(Exception):
                    writer.close()


async def serve(
    rtt: float, upstream: str, ready: asyncio.Future[int] | None = None, stop: asyncio.Future[None] | None = None
) -> None:
    """Relay until ``stop`` is done (or forever without one); then every relayed connection is closed too."""
    host, _, port = upstream.rpartition(":")
    relays: set[asyncio.Task[None]] = set()

    async def relay(client: asyncio.StreamReader, out: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None  # a connection's callback runs as a task of its own (asyncio.start_server)
        relays.add(task)
        try:
            await _relay(rtt, host, int(port), client, out)
        except asyncio.CancelledError:
            pass  # the relay stops (below): asyncio's stream callback would print a cancelled task's traceback
        finally:
            relays.discard(task)

    server = await asyncio.start_server(relay, "127.0.0.1", 0)
    listening = int(server.sockets[0].getsockname()[1])
    if ready is not None:
        ready.set_result(listening)
    else:
        print(listening, flush=True)
    async with server:
        if stop is None:
            await server.serve_forever()
            return
        await stop
        server.close()
        for task in list(relays):
            task.cancel()
        await asyncio.gather(*relays, return_exceptions=True)


@contextlib.contextmanager
def in_thread(rtt: float, upstream: str, timeout: float = 10.0) -> Iterator[int]:
    """The relay on a thread of this process while the block runs; its port.  At the block's end the relay
    stops: it listens no more, every connection it relays is closed, and its thread ends (within ``timeout``)."""
    loop = asyncio.new_event_loop()
    ready: asyncio.Future[int] = loop.create_future()
    stop: asyncio.Future[None] = loop.create_future()
    thread = threading.Thread(
        target=loop.run_until_complete, args=(serve(rtt, upstream, ready, stop),), name="rtt-relay", daemon=True
    )
    thread.start()
    deadline = time.monotonic() + timeout
    while not ready.done() and thread.is_alive() and time.monotonic() < deadline:
        thread.join(0.01)
    try:
        if not ready.done():
            raise RuntimeError(f"the relay to {upstream} did not start listening within {timeout:g} s")
        yield ready.result()
    finally:
        if thread.is_alive():

            def stopping() -> None:
                if not stop.done():
                    stop.set_result(None)

            loop.call_soon_threadsafe(stopping)
            thread.join(timeout)
        if not thread.is_alive():
            loop.close()


def suite_runs(rtt: float, runs: int, extra: list[str]) -> None:
    """``runs`` default-profile suite runs against a fresh reference behind the relay; each run's wall time,
    requests and writes (to compare two commits, run this module in a checkout of each)."""
    from devtools.launcher import run_suite
    from petstore_contract.reference import BackgroundServer, build_app

    times = []
    for _ in range(runs):
        key = "rtt-" + secrets.token_urlsafe(12)
        with BackgroundServer(build_app(key)) as server, in_thread(rtt, f"127.0.0.1:{server.port}") as port:
            run = run_suite(f"http://127.0.0.1:{port}/v1", key, *extra)
        times.append(run.seconds)
        facts = {k: run.summary.get(k) for k in ("requests", "writes", "duration_s")}
        print(f"{run.verdict}: {run.seconds:.1f} s wall, {facts}", flush=True)
    print(f"median {statistics.median(times):.1f} s over {runs} runs at {rtt * 1000:g} ms", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rtt-ms", type=float, required=True)
    parser.add_argument("--upstream", metavar="HOST:PORT", help="relay to this server until interrupted")
    parser.add_argument("--suite", type=int, metavar="N", help="or: N suite runs through a relay, timed")
    parser.add_argument("pytest_args", nargs="*", help="with --suite: more pytest arguments (after --)")
    args = parser.parse_args()
    if args.suite:
        suite_runs(args.rtt_ms / 1000, args.suite, args.pytest_args)
        return
    if not args.upstream:
        parser.error("give --upstream HOST:PORT or --suite N")
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(args.rtt_ms / 1000, args.upstream))


if __name__ == "__main__":
    main()
