"""The self-proof's material: the servers the self-tests run the contract suite against to prove it
(a development tool of the checkout, never installed; the installed package serves the clean
reference only).

- ``faults.toml`` and ``faults``: the fault catalog, each fault breaking one clause (``FAULTS``);
- ``faulty/``: each fault's implementation, a subclass of the clean server registered under its name
  (``REGISTERED``), served through ``build_app``'s ``store_factory`` (``catalog_app``);
- ``variants``: the compliant variants (``VARIANTS``) and the fault-free servers no suite can judge
  (``UNJUDGEABLE``), built from the reference's knobs (``Variant``); ``fronts``: what a variant's front
  (a proxy's or a middleware's ways) does before the reference; ``gzipping``: the send that gzips a whole
  answer, for a front and a fault alike;
- ``python -m devtools.catalog``: the reference's command line plus ``--fault``, ``--variant`` and
  ``--list``.
"""

from devtools.catalog.faults import FAULTS, RFC_QUOTES, Fault
from devtools.catalog.faulty import REGISTERED, Implementation, catalog_app, store_factory
from devtools.catalog.variants import UNJUDGEABLE, VARIANTS

__all__ = [
    "FAULTS",
    "REGISTERED",
    "RFC_QUOTES",
    "UNJUDGEABLE",
    "VARIANTS",
    "Fault",
    "Implementation",
    "catalog_app",
    "store_factory",
]
