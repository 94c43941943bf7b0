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
    await asyncio.sleep(rtt)  # the handshake's round trip
    try:
        upstream, back = await asyncio.open_connection(host, port)
    except OSError:
        out.close()
        return
    await asyncio.gather(_pipe(client, back, rtt / 2), _pipe(upstream, out, rtt / 2), return_exceptions=True)


async def serve(rtt: float, upstream: str, ready: asyncio.Future[int] | None = None) -> None:
    host, _, port = upstream.rpartition(":")
    server = await asyncio.start_server(lambda r, w: _relay(rtt, host, int(port), r, w), "127.0.0.1", 0)
    listening = int(server.sockets[0].getsockname()[1])
    if ready is not None:
        ready.set_result(listening)
    else:
        print(listening, flush=True)
    async with server:
        await server.serve_forever()


def in_thread(rtt: float, upstream: str) -> int:
    """The relay on a daemon thread of this process; its port."""
    loop = asyncio.new_event_loop()
    ready: asyncio.Future[int] = loop.create_future()
    threading.Thread(target=loop.run_until_complete, args=(serve(rtt, upstream, ready),), daemon=True).start()
    while not ready.done():
        threading.Event().wait(0.01)
    return ready.result()


def suite_runs(rtt: float, runs: int, extra: list[str]) -> None:
    """``runs`` default-profile suite runs against a fresh reference behind the relay; each run's wall time,
    requests and writes (to compare two commits, run this module in a checkout of each)."""
    from devtools.launcher import run_suite
    from petstore_contract.reference import BackgroundServer, build_app

    times = []
    for _ in range(runs):
        key = "rtt-" + secrets.token_urlsafe(12)
        with BackgroundServer(build_app(key)) as server:
            port = in_thread(rtt, f"127.0.0.1:{server.port}")
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
