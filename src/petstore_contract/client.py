"""The HTTP client of the targeted tests: bounded, same-origin, and recorded for the report.

Every request has a timeout, reads at most ``max_body_bytes`` of an answer, follows a
redirect only within the target's origin (so the key never reaches another host), and
turns transport trouble into a one-line ``TargetError`` that names the cause.
"""

from __future__ import annotations

import base64
import json
import shlex
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode, urljoin, urlsplit

import requests

from petstore_contract import guard
from petstore_contract.redaction import Redactor

UNSET: Any = object()
VALID = "Bearer {key}"
BODY_PREVIEW = 2000


class TargetError(Exception):
    """The target could not be talked to (refused, silent, reset, TLS, oversized...)."""


@dataclass
class Exchange:
    """One request and its answer, as the report shows them (key already redacted)."""

    method: str
    url: str
    request_headers: dict[str, str]
    request_body: bytes | None
    status: int = 0
    headers: requests.structures.CaseInsensitiveDict[str] = field(
        default_factory=requests.structures.CaseInsensitiveDict
    )
    body: bytes = b""
    elapsed: float = 0.0
    redact: Redactor = field(default_factory=lambda: Redactor(None), repr=False)

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")

    def json(self) -> Any:
        """The body as JSON; a body that is not JSON fails the test with what came back."""
        try:
            return json.loads(self.body)
        except ValueError:
            raise AssertionError(f"expected a JSON body, got {self.preview()!r}") from None

    def preview(self, limit: int = 200) -> str:
        text = self.redact(self.text)
        return text if len(text) <= limit else text[:limit] + f"... ({len(self.body)} bytes)"

    def curl(self) -> str:
        parts = ["curl", "-i", "-X", self.method]
        for name, value in self.request_headers.items():
            parts += ["-H", f"{name}: {value}"]
        if self.request_body is not None:
            parts += ["--data-binary", self.redact(self.request_body.decode("utf-8", errors="replace"))]
        parts.append(self.url)
        return " ".join(shlex.quote(p) for p in parts)

    def render(self) -> str:
        """Request and response in HTTP form, long bodies cut with a note."""
        lines = [f"> {self.method} {self.url}"]
        lines += [f"> {k}: {v}" for k, v in self.request_headers.items()]
        if self.request_body is not None:
            lines.append("> " + _cut(self.redact(self.request_body.decode("utf-8", errors="replace"))))
        lines.append(f"< {self.status}")
        lines += [f"< {k}: {self.redact(v)}" for k, v in self.headers.items()]
        lines.append("< " + _cut(self.redact(self.text)))
        lines.append(f"replay: {self.curl()}")
        return "\n".join(lines)


def _cut(text: str) -> str:
    if len(text) <= BODY_PREVIEW:
        return text
    return text[:BODY_PREVIEW] + f"\n[... cut: {len(text) - BODY_PREVIEW} more characters]"


class ContractClient:
    """Talks to one target; keeps the exchanges of the running test for its report."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        timeout: float = 10.0,
        max_body_bytes: int = 4_000_000,
        verify: bool | str = True,
        max_redirects: int = 3,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.origin = _origin(self.base_url)
        self.api_key = api_key
        self.timeout = timeout
        self.max_body_bytes = max_body_bytes
        self.max_redirects = max_redirects
        self.redact = Redactor(api_key)
        self.session = requests.Session()
        self.session.verify = verify
        self.session.trust_env = False  # no proxy from the environment sees the key
        self.exchanges: list[Exchange] = []
        self.request_count = 0

    # -- public verbs --------------------------------------------------------------------------

    def get(self, path: str, **kwargs: Any) -> Exchange:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, **kwargs: Any) -> Exchange:
        return self.request("POST", path, **kwargs)

    def request(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, Any] | None = None,
        json_body: Any = UNSET,
        data: bytes | str | None = None,
        authorization: str | None = VALID,
        headers: dict[str, str] | None = None,
    ) -> Exchange:
        """Send one request.  ``authorization`` and ``params`` values may hold ``{key}`` / ``{key_b64}``."""
        all_headers = {"Accept": "application/json", **(headers or {})}
        if authorization is not None:
            all_headers["Authorization"] = self._fill(authorization)
        body: bytes | None = None
        if json_body is not UNSET:
            body = json.dumps(json_body, ensure_ascii=False).encode()
            all_headers.setdefault("Content-Type", "application/json")
        elif data is not None:
            body = data.encode() if isinstance(data, str) else data
            all_headers.setdefault("Content-Type", "application/json")
        query = {k: self._fill(str(v)) for k, v in (params or {}).items()}
        url = self.base_url + path + ("?" + urlencode(query) if query else "")
        return self._send(method, url, all_headers, body)

    def start_test(self) -> None:
        self.exchanges = []

    # -- internals -----------------------------------------------------------------------------

    def _fill(self, template: str) -> str:
        key_b64 = base64.b64encode(self.api_key.encode()).decode()
        return template.replace("{key_b64}", key_b64).replace("{key}", self.api_key)

    def _send(self, method: str, url: str, headers: dict[str, str], body: bytes | None) -> Exchange:
        exchange = Exchange(
            method=method,
            url=self.redact(url),
            request_headers={k: self.redact(v) for k, v in headers.items()},
            request_body=body,
            redact=self.redact,
        )
        self.exchanges.append(exchange)
        started = time.monotonic()
        for _ in range(self.max_redirects + 1):
            response = self._transport(method, url, headers, body)
            if response.status_code not in (301, 302, 303, 307, 308) or "location" not in response.headers:
                break
            target = urljoin(url, response.headers["location"])
            response.close()
            if _origin(target) != self.origin:
                raise TargetError(
                    f"{method} {self.redact(url)} was redirected to another origin ({_origin(target)}); "
                    "not followed, so the API key stays with the target"
                )
            url = target
        else:
            raise TargetError(f"{method} {exchange.url}: more than {self.max_redirects} redirects")
        exchange.status = response.status_code
        exchange.headers = response.headers
        exchange.body = self._read_body(response, exchange)
        exchange.elapsed = time.monotonic() - started
        return exchange

    def _transport(self, method: str, url: str, headers: dict[str, str], body: bytes | None) -> requests.Response:
        """One request, unless the run's guard (budget, circuit breaker) says the target is done with."""
        run_guard = guard.current()
        try:
            run_guard.check()
        except guard.TargetUnavailable as exc:
            raise TargetError(str(exc)) from None
        try:
            return self._send_once(method, url, headers, body, run_guard.timeout(self.timeout))
        except TargetError as exc:
            spent = run_guard.failed(str(exc))
            raise TargetError(spent or str(exc)) from None

    def _send_once(
        self, method: str, url: str, headers: dict[str, str], body: bytes | None, timeout: float
    ) -> requests.Response:
        self.request_count += 1
        where = self.redact(url)
        try:
            return self.session.request(
                method, url, headers=headers, data=body, timeout=timeout, allow_redirects=False, stream=True
            )
        except requests.exceptions.SSLError as exc:
            raise TargetError(f"TLS error talking to {self.origin}: {_reason(exc)} (see --ca-bundle)") from None
        except requests.exceptions.ConnectTimeout:
            raise TargetError(f"no connection to {self.origin} within {self.timeout:g} s") from None
        except requests.exceptions.ReadTimeout:
            raise TargetError(f"{method} {where}: no answer within {self.timeout:g} s") from None
        except requests.exceptions.ConnectionError as exc:
            raise TargetError(f"{method} {where}: {_reason(exc)}") from None
        except requests.exceptions.RequestException as exc:
            raise TargetError(f"{method} {where}: {_reason(exc)}") from None

    def _read_body(self, response: requests.Response, exchange: Exchange) -> bytes:
        """The body within --max-body-bytes and 3x the timeout; a body that fails counts as no answer."""
        run_guard = guard.current()
        try:
            body = guard.read_body(response, self.max_body_bytes, self.timeout * 3)
        except guard.BodyError as exc:
            message = f"{exchange.method} {exchange.url}: {exc}"
            raise TargetError(run_guard.failed(message) or message) from None
        run_guard.answered()
        return body


def _origin(url: str) -> str:
    parts = urlsplit(url)
    port = parts.port or {"http": 80, "https": 443}.get(parts.scheme, 0)
    return f"{parts.scheme}://{parts.hostname}:{port}"


def _reason(exc: BaseException) -> str:
    return guard.reason(exc)
