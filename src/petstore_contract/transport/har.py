"""Every exchange of a run, kept as HAR 1.2 (what browsers' developer tools open): ``exchanges.har``.

A run that keeps its exchanges (``--contract-record DIR``, set by ``petstore-contract certify``)
gives each process's adapter a ``Recorder``: every request sent and its answer (or why there was
none) becomes one HAR entry, redacted at once as the run redacts its exchanges (the key as
``$<key variable>``, its encodings and near misses of it as ``[REDACTED]``), appended as one JSON
line to a file of its own process in DIR.  xdist workers get the same settings, so every process
of the run writes there; ``build`` merges the files in
the order the requests went out.

HAR 1.2 (http://www.softwareishard.com/blog/har-12-spec/): each entry has ``startedDateTime`` (ISO
8601 with milliseconds, UTC), ``time``, a ``request`` and a ``response`` with their headers,
``cookies``, sizes (-1 when unknown), ``cache`` and ``timings`` (``send``, ``wait``, ``receive``;
-1 for the phases not measured).  A request that got no answer has status 0 and its reason in
``_error`` (custom fields start with an underscore), as Chrome writes failed requests.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import IO
from urllib.parse import parse_qsl, urlsplit

from petstore_contract.core import atomic
from petstore_contract.interface.jsontypes import JsonObject, JsonValue
from petstore_contract.transport import Observed

HAR_VERSION = "1.2"
FILE_GLOB = "exchanges-*.jsonl"
BODY_LIMIT = 1_000_000  # characters of a body kept in the HAR; the rest is cut, and the entry says so
PAGE_ID = "contract-run"
HTTP_VERSIONS = {9: "HTTP/0.9", 10: "HTTP/1.0", 11: "HTTP/1.1", 20: "HTTP/2"}


def iso(moment: float) -> str:
    """ISO 8601, UTC, milliseconds: what HAR's ``startedDateTime`` and JavaScript's ``Date`` read."""
    return datetime.fromtimestamp(moment, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Recorder:
    """A watcher of the run's adapter (``GuardedAdapter.watchers``): one JSON line per exchange."""

    def __init__(self, directory: str | os.PathLike[str], scrub: Callable[[str], str], name: str = "") -> None:
        folder = Path(directory)
        folder.mkdir(parents=True, exist_ok=True)
        label = f"{name}-{os.getpid()}" if name else str(os.getpid())
        self.path = folder / f"exchanges-{label}-{threading.get_ident()}.jsonl"
        self.scrub = scrub  # the run's redaction of a recorded value
        self._lock = threading.Lock()
        self._out: IO[str] | None = self.path.open("a", encoding="utf-8")

    def __call__(self, seen: Observed) -> None:
        line = json.dumps(entry(seen, self.scrub), ensure_ascii=False)
        with self._lock:
            if self._out is not None:
                self._out.write(line + "\n")
                self._out.flush()  # a process that is killed later still leaves whole lines

    def close(self) -> None:
        with self._lock:
            if self._out is not None:
                self._out.close()
                self._out = None


# -- one entry --------------------------------------------------------------------------------------


def entry(seen: Observed, show: Callable[[str], str]) -> JsonObject:
    """One HAR entry; every string that could carry the key passes ``show`` (the run's redactor)."""
    wait, receive = _ms(seen.wait), _ms(seen.receive)
    found: JsonObject = {
        "pageref": PAGE_ID,
        "startedDateTime": iso(seen.started),
        "time": round(wait + receive, 3),
        "request": _request(seen, show),
        "response": _response(seen, show),
        "cache": {},
        "timings": {"blocked": -1, "dns": -1, "connect": -1, "ssl": -1, "send": 0, "wait": wait, "receive": receive},
    }
    if seen.problem:
        found["_error"] = show(seen.problem)
    return found


def _ms(seconds: float) -> float:
    return round(max(seconds, 0.0) * 1000, 3)


def _request(seen: Observed, show: Callable[[str], str]) -> JsonObject:
    request = seen.request
    url = show(request.url or "")
    body = request.body
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body if isinstance(body, str) else None
    headers: list[JsonValue] = [{"name": name, "value": show(str(value))} for name, value in request.headers.items()]
    query: list[JsonValue] = [
        {"name": k, "value": v} for k, v in parse_qsl(urlsplit(url).query, keep_blank_values=True)
    ]
    found: JsonObject = {
        "method": request.method or "GET",
        "url": url,
        "httpVersion": "HTTP/1.1",
        "cookies": [],
        "headers": headers,
        "queryString": query,
        "headersSize": -1,
        "bodySize": len(body.encode() if isinstance(body, str) else body) if body is not None else 0,
    }
    if text is not None:
        mime = str(request.headers.get("Content-Type", "application/octet-stream"))
        found["postData"] = {"mimeType": mime, "params": [], "text": _cut(show(text))}
    return found


def _response(seen: Observed, show: Callable[[str], str]) -> JsonObject:
    answer = seen.answer
    fields, body = (answer.fields, answer.body) if answer is not None else ((), b"")
    headers: list[JsonValue] = [{"name": name, "value": show(value)} for name, value in fields]
    mime = next((value for name, value in fields if name.lower() == "content-type"), "")
    content: JsonObject = {"size": len(body), "mimeType": mime or "x-unknown"}
    if body:
        text = show(body.decode("utf-8", "replace"))
        content["text"] = _cut(text)
        if len(text) > BODY_LIMIT:
            content["comment"] = f"body cut to {BODY_LIMIT:,} of {len(text):,} characters"
    location = next((value for name, value in fields if name.lower() == "location"), "")
    return {
        "status": answer.status if answer is not None else 0,
        "statusText": answer.reason if answer is not None else "",
        "httpVersion": HTTP_VERSIONS.get(answer.version, "HTTP/1.1") if answer is not None else "",
        "cookies": [],
        "headers": headers,
        "content": content,
        "redirectURL": show(location),
        "headersSize": -1,
        "bodySize": len(body) if answer is not None else -1,
    }


def _cut(text: str) -> str:
    return text if len(text) <= BODY_LIMIT else text[:BODY_LIMIT]


# -- the file ---------------------------------------------------------------------------------------


def build(directory: str | os.PathLike[str], *, title: str, creator_version: str) -> JsonObject:
    """The HAR of every process's recorded exchanges in ``directory``, in the order they went out."""
    entries: list[tuple[str, JsonValue]] = []  # (its startedDateTime, the entry)
    for path in sorted(Path(directory).glob(FILE_GLOB)):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                found: JsonValue = json.loads(line)
                started = found.get("startedDateTime") if isinstance(found, dict) else None
                entries.append((started if isinstance(started, str) else "", found))
    entries.sort(key=lambda pair: pair[0])
    page: JsonObject = {
        "startedDateTime": entries[0][0] if entries else iso(0),
        "id": PAGE_ID,
        "title": title,
        "pageTimings": {"onContentLoad": -1, "onLoad": -1},
    }
    creator: JsonObject = {"name": "petstore-contract", "version": creator_version}
    log: JsonObject = {"version": HAR_VERSION, "creator": creator, "pages": [page], "entries": [e for _, e in entries]}
    return {"log": log}


def entry_count(har: JsonObject) -> int:
    """How many exchanges a HAR built by ``build`` holds."""
    log = har.get("log")
    entries = log.get("entries") if isinstance(log, dict) else None
    return len(entries) if isinstance(entries, list) else 0


def write(path: str | os.PathLike[str], har: JsonObject, scrub: Callable[[str], str]) -> None:
    """The HAR as JSON, passed once more as a whole through ``scrub`` (the run's redaction; the entries were)."""
    atomic.write_text(path, scrub(json.dumps(har, indent=1, ensure_ascii=False)) + "\n")
