"""The listening socket of the suite's own servers (no server library: the run's process binds it)."""

from __future__ import annotations

import socket


def bind_loopback(host: str = "127.0.0.1", port: int = 0) -> socket.socket:
    # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY only on sockets that say so, and without
    # it every answer waits ~40 ms on Nagle and delayed ACK.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    # Listening at once: a client told the address (the command line prints it) can connect
    # before the server's loop has started; uvicorn listens on it again, which is harmless.
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock
