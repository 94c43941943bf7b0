"""Set-up's refused creates as requests, and the look at the store right after them.

On a store seen whole before any write, set-up sends every refused create first and then asks for one
unfiltered page of 100 (``LOOK``).  For a server cap ``C >= 1`` and ``n`` animals that page holds
``min(100, n, C)``: an empty page proves the store holds none, so the refusals added nothing, whatever
the cap and the order; a page of ``q`` animals, ``q < 100``, is the whole store once any page of the run
showed more than ``q`` (``store.seen_whole``).  Animals a lenient service created from a refused body
(answered 201) are known ids and count like any other.
"""

from __future__ import annotations

from typing import Any

from petstore_contract.run import writeplan
from petstore_contract.run.api import Request

LOOK = "unfiltered|100"  # the key of the page asked for right after the refused creates


def refused_requests(bodies: dict[str, Any]) -> dict[str, Request]:
    """Each refused create of ``writeplan.rejected_bodies`` as the request that sends it."""

    def request(key: str, body: Any) -> Request:
        if key.startswith("raw-"):
            return Request("POST", "/pets", data=writeplan.raw_bytes(body))
        return Request("POST", "/pets", json_body=body, **writeplan.REFUSED_FOR.get(key.removeprefix("refused-"), {}))

    return {key: request(key, body) for key, body in bodies.items()}
