"""The embedded reference Pet Store server: the clean reference and its knobs (``Variant``).

The catalog of faults and compliant variants the self-tests run the suite against is not part of
the package: it is a development tool of the checkout (``devtools/catalog``), which serves its
stores through ``build_app``'s ``store_factory``.

The names load on first use (PEP 562): the run's process imports ``reference.child`` to start the
server in a process of its own, and needs neither Starlette nor uvicorn for that.

The modules: ``app`` (the operations and the store), ``rules`` (the document's rules as the reference
applies them), ``variants`` (the knobs: ``Variant`` and ``REFERENCE``), ``asgi`` (``build_app``: the
routes under /v1, the request counter, the ``store_factory`` seam), ``child`` and ``sockets`` (the
server in a process of its own, on a socket the run bound), ``server`` and ``__main__`` (the command
line).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from petstore_contract.reference.asgi import build_app
    from petstore_contract.reference.server import BackgroundServer
    from petstore_contract.reference.variants import REFERENCE, Variant

_HOME = {
    "build_app": "asgi",
    "BackgroundServer": "server",
    "REFERENCE": "variants",
    "Variant": "variants",
}

__all__ = ["REFERENCE", "BackgroundServer", "Variant", "build_app"]


def __getattr__(name: str) -> Any:
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{module}"), name)
