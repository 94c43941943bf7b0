"""How to talk to one target during one run, and where the target is."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from urllib.parse import urlsplit

from petstore_contract.defaults import (
    DEFAULT_CIRCUIT_BREAKER,
    DEFAULT_CONCURRENCY,
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_TIMEOUT,
)


@dataclass(frozen=True)
class TransportOptions:
    """How to talk to one target during one run."""

    base_url: str
    api_key: str
    key_env: str = "PETSTORE_API_KEY"
    timeout: float = DEFAULT_TIMEOUT  # seconds per request (connect and each read)
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    verify: bool | str = True  # False, True or a CA bundle path
    client_cert: str | None = None  # PEM certificate (or certificate + key) for mutual TLS
    client_key: str | None = None
    use_proxy_env: bool = True  # HTTPS_PROXY/HTTP_PROXY/NO_PROXY, never for a loopback target
    concurrency: int = DEFAULT_CONCURRENCY  # threads of ``Transport.map`` and connections per origin
    circuit_breaker: int = DEFAULT_CIRCUIT_BREAKER  # requests in a row without answer that open the breaker; 0: never
    deadline: float | None = None  # epoch seconds (time.time()) at which the run budget is spent
    budget: float | None = None  # the budget in seconds, for messages
    max_redirects: int = 3
    retry_after_cap: float = 30.0  # the longest single wait on Retry-After
    shared_dir: str | None = None  # a directory all processes of the run share (breaker, counters)


def origin(url: str) -> str:
    """``scheme://host:port`` with the default port made explicit (lower-case scheme and host)."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    try:
        port = parts.port or {"http": 80, "https": 443}.get(scheme, 0)
    except ValueError:  # a port that is not a number
        port = 0
    if ":" in host:
        host = f"[{host}]"
    return f"{scheme}://{host}:{port}"


def is_loopback(url: str) -> bool:
    host = (urlsplit(url).hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
