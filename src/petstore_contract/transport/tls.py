"""TLS for a run's connections: the trust store and the client certificate read once, not at every connect.

Every write goes out on a new connection (``connections``), and so does each request of the HTTP layer
(``raw``).  Given a CA bundle (``verify`` True: certifi's, as requests has it; or ``--contract-ca-bundle``),
requests hands its path to the connection pool and urllib3 loads it into the context at every connect:
parsing certifi's bundle of about 140 certificates costs ten times the handshake (measured: a write on a
new connection 56 ms of the client's CPU with a bundle that size, 4.6 ms with one of a single certificate),
so an ``https`` Staging paid seconds of CPU a run for it.  A run keeps one context for each way of
verifying, its store and client certificate loaded once, and every connection of the run uses it: what
is verified, and against what, is what requests would verify.
"""

from __future__ import annotations

import os
import ssl
import threading

from requests.utils import DEFAULT_CA_BUNDLE_PATH
from urllib3.util import create_urllib3_context


class TlsContexts:
    """The contexts of one run's connections, by ``verify`` (True, False or a CA bundle's path), each made
    at its first use; ``client_cert``/``client_key``: the client's certificate, loaded into each."""

    def __init__(self, client_cert: str | None = None, client_key: str | None = None) -> None:
        self.client_cert, self.client_key = client_cert, client_key
        self._made: dict[bool | str, ssl.SSLContext] = {}
        self._lock = threading.Lock()

    def context(self, verify: bool | str) -> ssl.SSLContext:
        """The context for ``verify``; OSError or ssl.SSLError where its files cannot be read (the
        caller lets requests say so, in its words, as without this module)."""
        with self._lock:
            made = self._made.get(verify)
            if made is None:
                made = self._made[verify] = self._make(verify)
            return made

    def _make(self, verify: bool | str) -> ssl.SSLContext:
        made = create_urllib3_context()
        if verify is False:
            made.check_hostname = False
            made.verify_mode = ssl.CERT_NONE
        else:
            where = DEFAULT_CA_BUNDLE_PATH if verify is True else verify
            if os.path.isdir(where):
                made.load_verify_locations(capath=where)
            else:
                made.load_verify_locations(cafile=where)
        if self.client_cert:
            made.load_cert_chain(self.client_cert, self.client_key)
        return made
