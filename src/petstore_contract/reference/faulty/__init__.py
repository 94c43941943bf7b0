"""The fault catalog's implementations: every fault of ``faults.toml`` as a subclass of the clean
``PetStore`` (``app.py``) or ``Rules`` (``rules.py``) that overrides the hooks it needs, one module a
part of the interface, each class registered under its fault's name (``registry.fault``).

``faulty_store`` builds the server of one fault (``asgi.build_app`` calls it); ``REGISTERED`` lists
every registration, which ``selftests/test_faults.py`` matches against the catalog.
"""

from __future__ import annotations

from petstore_contract.reference.faulty import auth, create, errors, listing, newpet, read
from petstore_contract.reference.faulty.registry import REGISTERED, Implementation, faulty_store

PARTS = (auth, create, errors, listing, newpet, read)  # imported for their registrations

__all__ = ["PARTS", "REGISTERED", "Implementation", "faulty_store"]
