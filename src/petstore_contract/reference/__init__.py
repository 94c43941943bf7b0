"""The embedded reference Pet Store server, its compliant variants and its fault catalog."""

from petstore_contract.reference.app import build_app
from petstore_contract.reference.faults import FAULTS, Fault
from petstore_contract.reference.server import BackgroundServer
from petstore_contract.reference.variants import REFERENCE, UNJUDGEABLE, VARIANTS, Variant

__all__ = [
    "FAULTS",
    "REFERENCE",
    "UNJUDGEABLE",
    "VARIANTS",
    "BackgroundServer",
    "Fault",
    "Variant",
    "build_app",
]
