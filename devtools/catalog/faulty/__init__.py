"""The fault catalog's implementations: every fault of ``faults.toml`` as a subclass of the clean
``PetStore`` (``reference/app.py``) or ``Rules`` (``reference/rules.py``) that overrides the hooks it
needs, one module a part of the interface, each class registered under its fault's name
(``registry.fault``).

``store_factory`` builds the server of one fault (what ``build_app`` takes as its ``store_factory``),
``catalog_app`` serves it; ``REGISTERED`` lists every registration, which ``selftests/test_faults.py``
matches against the catalog.
"""

from __future__ import annotations

from devtools.catalog.faulty import auth, create, errors, fronted, http_layer, listing, newpet, read
from devtools.catalog.faulty.registry import REGISTERED, Implementation, catalog_app, store_factory

PARTS = (auth, create, errors, fronted, http_layer, listing, newpet, read)  # imported for their registrations

__all__ = ["PARTS", "REGISTERED", "Implementation", "catalog_app", "store_factory"]
