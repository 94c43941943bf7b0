"""Bytes on the wire for ``flicker.FlickerProxy``: HTTP/1.1 messages read as framed (Content-Length,
chunked, or until the connection closes) so that they can be relayed byte for byte, and the answers a
gateway gives on its own (nginx's pages).

Every read goes through the socket's own timeout; a message that breaks the framing raises
``ConnectionError`` (an ``OSError``), which ends that connection and nothing else.
"""

from __future__ import annotations

import contextlib
import json
import socket
import struct
from dataclasses import dataclass
from email.utils import formatdate
from typing import Any

NGINX_502 = (
    b"<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
    b"<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"
)
NGINX_503 = (
    b"<html>\r\n<head><title>503 Service Temporarily Unavailable</title></head>\r\n<body>\r\n"
    b"<center><h1>503 Service Temporarily Unavailable</h1></center>\r\n<hr><center>nginx</center>\r\n"
    b"</body>\r\n</html>\r\n"
)
MAX_HEAD = 65536  # a request or answer head larger than this is no HTTP this proxy relays


@dataclass
class Message:
    head: bytes  # start line and fields, up to and including the empty line
    body: bytes  # as framed on the wire (chunks included)
    start: list[str]
    fields: dict[str, str]  # names in lower case; a repeated field keeps its last value (enough here)
    ends_connection: bool = False


class Wire:
    """A buffered reader of HTTP/1.1 messages on one socket (whose timeout bounds every read)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buffer = bytearray()

    def _fill(self) -> bool:
        data = self.sock.recv(65536)
        self.buffer += data
        return bool(data)

    def _take(self, size: int) -> bytes:
        while len(self.buffer) < size:
            if not self._fill():
                raise ConnectionError("closed mid-message")
        taken = bytes(self.buffer[:size])
        del self.buffer[:size]
        return taken

    def _line(self) -> bytes:
        while (end := self.buffer.find(b"\r\n")) < 0:
            if len(self.buffer) > MAX_HEAD or not self._fill():
                raise ConnectionError("no line end")
        return self._take(end + 2)

    def head(self) -> Message | None:
        """The next message's head; None when the peer closed between messages."""
        while (end := self.buffer.find(b"\r\n\r\n")) < 0:
            if len(self.buffer) > MAX_HEAD:
                raise ConnectionError("head too large")
            if not self._fill():
                if self.buffer:
                    raise ConnectionError("closed mid-head")
                return None
        head = self._take(end + 4)
        lines = head.decode("latin-1").split("\r\n")
        fields = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if sep:
                fields[name.strip().lower()] = value.strip()
        return Message(head, b"", lines[0].split(" ", 2), fields)

    def body(self, message: Message, bodiless: bool = False) -> None:
        """Read ``message``'s body as framed (``bodiless``: an answer to HEAD, or a 1xx/204/304)."""
        fields = message.fields
        if bodiless:
            return
        if "chunked" in fields.get("transfer-encoding", "").lower():
            parts = []
            while True:
                line = self._line()
                parts.append(line)
                size = int(line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while (trailer := self._line()) != b"\r\n":
                        parts.append(trailer)
                    parts.append(trailer)
                    break
                parts.append(self._take(size + 2))
            message.body = b"".join(parts)
        elif "content-length" in fields:
            message.body = self._take(int(fields["content-length"]))
        elif message.start[0].startswith("HTTP/"):  # an answer without framing ends with the connection
            while self._fill():
                pass
            message.body, self.buffer = bytes(self.buffer), bytearray()
            message.ends_connection = True


def closes(message: Message) -> bool:
    tokens = {t.strip().lower() for t in message.fields.get("connection", "").split(",")}
    version = message.start[0] if message.start[0].startswith("HTTP/") else message.start[-1]
    return "close" in tokens or (version == "HTTP/1.0" and "keep-alive" not in tokens)


def canned_answer(status: str, page: bytes, head_only: bool, extra: tuple[str, ...] = ()) -> bytes:
    """An answer of the gateway itself, as nginx words it (its Server field, its HTML page)."""
    lines = [f"HTTP/1.1 {status}", "Server: nginx", f"Date: {formatdate(usegmt=True)}", "Content-Type: text/html"]
    lines += [f"Content-Length: {len(page)}", "Connection: keep-alive", *extra]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (b"" if head_only else page)


def reset(sock: socket.socket) -> None:
    """Close with an RST, not a FIN: the client sees ``connection reset by peer``."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


def created_body(request: Message, answer: Message) -> dict[str, Any] | None:
    """The JSON body of a POST the upstream answered 201 (None for anything else)."""
    if request.start[0] != "POST" or answer.start[1:2] != ["201"]:
        return None
    if "chunked" in request.fields.get("transfer-encoding", "").lower():
        return None  # framed in chunks: not worth unframing, the suite sends Content-Length
    try:
        body = json.loads(request.body)
    except ValueError:
        return None
    return body if isinstance(body, dict) else None
