"""Faults of §7 where the document is silent: a framework's or a proxy's own error page in front of the
service (``fronts.py``), HTML or text where the Error body is due.  The compliant variants with the
same fronts and the Error body pass (``fronts.FRONTED``)."""

from __future__ import annotations

from devtools.catalog.faulty.registry import fault
from devtools.catalog.fronts import Front
from petstore_contract.reference.app import PetStore


@fault("front_415_html")
class Front415Html(PetStore):
    front = Front(media_type=415, body="html")


@fault("proxy_413_html")
class Proxy413Html(PetStore):
    front = Front(body_limit=64 * 1024, body="html")


@fault("router_404_text_before_auth")
class Router404Text(PetStore):
    front = Front(path=404, body="text")


@fault("accept_406_html")
class Accept406Html(PetStore):
    front = Front(accept=406, body="html")


@fault("auth_415_before_key")
class Auth415BeforeKey(PetStore):
    """Refuses a body in another media type (415, with the Error body) before it reads the key."""

    front = Front(media_type=415, media_type_first=True)


@fault("documented_path_redirected")
class DocumentedPathRedirected(PetStore):
    """Routes declared with a trailing slash: GET and POST /v1/pets answered 308 to /v1/pets/, the key
    unread; the service answers there."""

    front = Front(redirect="to-slash")
