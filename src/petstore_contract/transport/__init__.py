"""All HTTP of the suite: one bounded, same-origin, guarded transport for a run.

Every request of a run, whether a targeted test's ``Transport.request`` or a Schemathesis call
through ``Transport.session()``, goes through one ``GuardedAdapter``.  In its ``send()``:

- the run's ``RunGuard`` is asked first: once the run budget is spent or the circuit breaker is
  open, nothing more is sent (``TargetProblem``, kind "budget" or "target");
- a request to another origin than the target's is refused, so the API key never leaves it;
- the timeout is cut to what is left of the budget;
- the body is read with ``read1`` within ``max_body_bytes`` and 3 x the timeout (a trickling body
  still meets the deadline) into a new in-memory ``urllib3.HTTPResponse``;
- a 429 with ``Retry-After`` (RFC 6585 §4: the request was not processed) or a 503 with
  ``Retry-After`` (RFC 9110 §15.6.4: temporarily unable to handle it), to any method, is waited out
  and sent again (``answers.throttling``), at most ``MAX_RESENDS`` times, each wait at most
  ``retry_after_cap`` and never past the budget; still throttled, the last answer is returned and
  judges nothing (its test's clause is undecided, throttled);
- a write goes out on a connection that carried no request before, so that it never races a server's
  close of a kept-alive one (``connections``), opened ahead of it where one is ready so that it waits
  for no handshake (``spares``), and it is never sent twice on a guess (RFC 9110 §9.2.2):
  a POST whose connection dropped before its answer is an unknown write, counted and reported, never
  sent again;
- once the target has answered, a refused connection or a read dropped twice is a busy target's:
  back-pressure as for a 429, and the request sent again where nothing was applied (``busy``);
- requests in flight are bounded by a ``pacing.Pacer``: ``concurrency`` at most, fewer while the
  target throttles, with every sender of the process pausing and then paced after a 429;
- transport trouble becomes a one-line ``TargetProblem`` naming the cause and the (redacted) request.

TLS settings (``verify``, the client certificate) are the transport's, whatever a caller passes:
Schemathesis passes its own ``verify=True`` to every call.

Cookies: the in-memory answer carries no ``http.client`` response, so requests puts no cookie into
a session's jar (the Pet Store authenticates with a bearer key; cookies play no part).

Under pytest-xdist each process has its own ``RunGuard``; the deadline is one epoch time given by
the controller, an open breaker is a file in ``shared_dir`` that every process sees, and the
controller sums the counters each process wrote (``RunGuard.write_counters``, ``merge_counters``).

The modules: ``options`` (the target, where it is), ``problems`` (trouble as one line), ``guard``
(budget, breaker, counters), ``adapter`` (the one adapter; ``Observed``, an exchange as its watchers get
it), ``answers`` (the one answer type every check reads, ``Answer``, with its raw bytes view as an
optional part; ``Unanswered``, no answer and its reason; recorded exchanges),
``batch`` (side by side on a bounded pool), ``pacing`` (the bound on requests in flight under 429),
``shared`` (the only files a run's processes share: set-up results, counters, the open breaker; one
``publish``), ``har`` (every exchange as HAR 1.2), ``connections`` (every write on a connection that
carried no request before), ``busy`` (a busy target's refusals and drops answered with back-pressure),
``spares`` (connections opened ahead of the writes), ``tls`` (the trust store and client certificate read
once a run), ``raw`` (the HTTP layer's requests sent exactly as written); this one holds ``Transport`` and
names them all.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar
from urllib.parse import urlencode, urljoin

import requests

from petstore_contract.core import records as record
from petstore_contract.core.redaction import Redactor
from petstore_contract.transport.adapter import GuardedAdapter, Observed
from petstore_contract.transport.answers import Answer, build_exchange, parse_retry_after, throttling
from petstore_contract.transport.batch import Batch
from petstore_contract.transport.guard import BREAKER_FILE, COUNTERS_GLOB, SERVER_ERRORS, RunGuard, merge_counters
from petstore_contract.transport.options import TransportOptions, is_loopback, origin
from petstore_contract.transport.problems import INCOMPLETE, TargetProblem, describe, reason

__all__ = [
    "BREAKER_FILE",
    "COUNTERS_GLOB",
    "SERVER_ERRORS",
    "Answer",
    "Batch",
    "GuardedAdapter",
    "Observed",
    "RunGuard",
    "TargetProblem",
    "Transport",
    "TransportOptions",
    "describe",
    "merge_counters",
    "origin",
    "parse_retry_after",
    "throttling",
]

T = TypeVar("T")
R = TypeVar("R")
REDIRECTS = frozenset({301, 302, 303, 307, 308})


# -- the transport ---------------------------------------------------------------------------------


class Transport:
    """All HTTP of a run against one target: sessions for Schemathesis, ``request`` and ``map`` for targeted tests."""

    def __init__(
        self, options: TransportOptions, guard: RunGuard | None = None, redactor: Redactor | None = None
    ) -> None:
        self.options = options
        self.guard = guard if guard is not None else RunGuard.from_options(options)
        self.redact = redactor if redactor is not None else Redactor(options.api_key, options.key_env)
        self.base_url = options.base_url.rstrip("/")
        self.origin = origin(self.base_url)
        self.proxies = self._proxies()
        self.adapter = GuardedAdapter(options, self.guard, self.redact)
        self._local = threading.local()

    def _proxies(self) -> dict[str, str]:
        if not self.options.use_proxy_env or is_loopback(self.base_url):
            return {}
        found = requests.utils.get_environ_proxies(self.base_url)
        return {scheme: url for scheme, url in found.items() if scheme in ("http", "https", "all") and url}

    def auth_headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.options.api_key}"}

    def session(self) -> requests.Session:
        """A new session on the run's one adapter; one per thread (Schemathesis swaps ``headers`` during a call)."""
        session = requests.Session()
        session.trust_env = False  # no .netrc credentials, no proxy unless set below
        session.proxies = dict(self.proxies)
        session.verify = self.options.verify
        session.cert = self.adapter.cert
        session.max_redirects = self.options.max_redirects
        session.mount("http://", self.adapter)
        session.mount("https://", self.adapter)
        return session

    def _thread_session(self) -> requests.Session:
        session = getattr(self._local, "session", None)
        if session is None:
            session = self._local.session = self.session()
        return session

    def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        headers: Mapping[str, str | None] | None = None,
        body: bytes | None = None,
    ) -> Answer:
        """One request to ``base_url + path``; redirects followed within the target's origin only.

        Sends ``Accept: application/json`` and ``Authorization: Bearer <key>`` unless ``headers`` names
        them (a None value: the header is not sent); a body gets ``Content-Type: application/json``
        unless given.  Transport trouble raises TargetProblem (its ``exchange`` records the request).
        """
        method = method.upper()
        url = self.base_url + path + ("?" + urlencode(params, doseq=True) if params else "")
        sent: dict[str, str | None] = {"Accept": "application/json", **self.auth_headers()}
        if body is not None:
            sent["Content-Type"] = "application/json"
        for name, value in (headers or {}).items():
            for existing in [k for k in sent if k.lower() == name.lower()]:
                del sent[existing]
            sent[name] = value
        final: dict[str, str] = {k: v for k, v in sent.items() if v is not None}
        session = self._thread_session()
        redirects = 0
        while True:
            try:
                response = session.request(
                    method, url, headers=final, data=body, timeout=self.options.timeout, allow_redirects=False
                )
            except TargetProblem as exc:
                if exc.kind != INCOMPLETE or exc.exchange is None:  # an answer cut short keeps what arrived
                    exc.exchange = build_exchange(self.redact, method, url, final, body, problem=str(exc))
                raise
            except requests.exceptions.RequestException as exc:  # e.g. an invalid URL: nothing was sent
                line = f"{method} {self.redact(url)}: {reason(exc)}"
                self.guard.noted(line)
                raise TargetProblem(
                    line, exchange=build_exchange(self.redact, method, url, final, body, problem=line)
                ) from None
            location = response.headers.get("Location")
            if response.status_code not in REDIRECTS or not location:
                break
            target = urljoin(url, location)
            if origin(target) != self.origin:
                line = (
                    f"{method} {self.redact(url)} was redirected to another origin ({origin(target)}); "
                    "not followed, so the API key stays with the target"
                )
                self.guard.noted(line)
                raise TargetProblem(line, exchange=self.exchange(response, problem=line))
            redirects += 1
            if redirects > self.options.max_redirects:
                line = f"{method} {self.redact(url)}: more than {self.options.max_redirects} redirects"
                self.guard.noted(line)
                raise TargetProblem(line, exchange=self.exchange(response, problem=line))
            if (response.status_code == 303 and method != "HEAD") or (
                response.status_code in (301, 302) and method == "POST"
            ):
                method, body = "GET", None
                final = {k: v for k, v in final.items() if k.lower() != "content-type"}
            url = target
        return Answer(
            status=response.status_code,
            headers=response.headers,
            body=response.content,
            recorded=self.exchange(response),
        )

    def exchange(self, response: Any, problem: str = "") -> record.Exchange:
        """The redacted record of a request and its answer.

        ``response`` is a ``requests.Response`` or what ``Case.call`` returns (a Schemathesis
        ``Response``: same ``request``, ``status_code`` and ``content``, header values as lists).
        """
        request = response.request
        pairs: list[tuple[str, str]] = []
        for name, value in response.headers.items():
            pairs += [(name, str(v)) for v in value] if isinstance(value, list) else [(name, str(value))]
        return build_exchange(
            self.redact,
            request.method or "GET",
            request.url or "",
            request.headers,
            request.body if isinstance(request.body, bytes | str) else None,
            status=response.status_code,
            response_headers=pairs,
            response_body=response.content or b"",
            problem=problem,
        )

    def map(self, fn: Callable[[T], R], items: Iterable[T]) -> list[R]:
        """``fn(item)`` for independent items on ``concurrency`` threads; results in input order.

        Every item runs (a spent budget or an open breaker makes the rest fail fast); then the first
        exception, in input order, is raised, with a note counting the others.  Concurrency 1 runs
        the items one after another in the calling thread.
        """
        work = list(items)
        batch = self.batch(fn, len(work))
        for item in work:
            batch.submit(item)
        return batch.results()

    def batch(self, fn: Callable[[T], R], size: int | None = None) -> Batch[T, R]:
        """A ``map`` whose items are sent as they come (e.g. while Hypothesis draws the next one)."""
        limit = max(self.options.concurrency, 1)
        return Batch(fn, min(limit, size) if size is not None else limit)

    def close(self) -> None:
        """Stops throttling waits and closes every pooled connection."""
        self.adapter.close()
