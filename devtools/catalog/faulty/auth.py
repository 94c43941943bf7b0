"""Faults of authentication (§5): who is let in, and what a request that is not gets."""

from __future__ import annotations

import hmac

from starlette.requests import Request
from starlette.responses import Response

from devtools.catalog.faulty.registry import fault
from petstore_contract.reference.app import PetStore
from petstore_contract.reference.rules import Rules, credentials

# -- let in without the key in the Authorization header ------------------------------------------------


class Admits(PetStore):
    """Lets in a request that ``admits`` says may come in, whatever its Authorization header says."""

    def admits(self, request: Request, operation: str) -> bool:
        raise NotImplementedError

    async def authorize(self, request: Request, operation: str) -> Response | None:
        # A server that refuses every key (an unjudgeable variant) refuses these requests too.
        if not self.variant.reject_every_key and self.admits(request, operation):
            return None
        return await super().authorize(request, operation)


class OpenTo(Admits):
    """Serves ``operation`` to a request without credentials."""

    operation = ""

    def admits(self, request: Request, operation: str) -> bool:
        return operation == self.operation and request.headers.get("authorization") is None


@fault("auth_open_list")
class AuthOpenList(OpenTo):
    operation = "list"


@fault("auth_open_create")
class AuthOpenCreate(OpenTo):
    operation = "create"


@fault("auth_open_read")
class AuthOpenRead(OpenTo):
    operation = "read"


@fault("auth_open_orders")
class AuthOpenOrders(OpenTo):
    operation = "orders"


@fault("auth_accepts_query_key")
class AuthAcceptsQueryKey(Admits):
    def admits(self, request: Request, operation: str) -> bool:
        return request.query_params.get("access_token") == self.api_key


@fault("auth_accepts_api_key_param")
class AuthAcceptsApiKeyParam(Admits):
    def admits(self, request: Request, operation: str) -> bool:
        return request.query_params.get("api_key") == self.api_key


@fault("auth_accepts_x_api_key")
class AuthAcceptsXApiKey(Admits):
    def admits(self, request: Request, operation: str) -> bool:
        headers = request.headers
        return headers.get("authorization") is None and headers.get("x-api-key") == self.api_key


# -- validate before authenticating ---------------------------------------------------------------------


@fault("auth_create_validates_first")
class AuthCreateValidatesFirst(PetStore):
    async def authorize(self, request: Request, operation: str) -> Response | None:
        if operation == "create" and "authorization" not in request.headers:
            self.rules.validate_new_pet(await self.read_body(request))
        return await super().authorize(request, operation)


@fault("auth_list_validates_first")
class AuthListValidatesFirst(PetStore):
    async def authorize(self, request: Request, operation: str) -> Response | None:
        if operation == "list" and "authorization" not in request.headers:
            self.check_query(request)
        return await super().authorize(request, operation)


# -- 403 instead of 401 (a server refusing every key answers 401 all the same) -------------------------


@fault("auth_missing_403")
class AuthMissing403(PetStore):
    def unauthorized(self, presented: bool, operation: str) -> Response:
        if presented or self.variant.reject_every_key:
            return super().unauthorized(presented, operation)
        return self.error(403, "forbidden", "no API key")


@fault("auth_403")
class Auth403(PetStore):
    def unauthorized(self, presented: bool, operation: str) -> Response:
        if not presented or self.variant.reject_every_key:
            return super().unauthorized(presented, operation)
        return self.error(403, "forbidden", "key not accepted")


# -- the challenge of a 401 -----------------------------------------------------------------------------


@fault("auth_no_challenge")
class AuthNoChallenge(PetStore):
    def challenge(self, presented: bool, operation: str) -> dict[str, str]:
        return {}


@fault("auth_orders_no_challenge")
class AuthOrdersNoChallenge(PetStore):
    def challenge(self, presented: bool, operation: str) -> dict[str, str]:
        return {} if operation == "orders" else super().challenge(presented, operation)


@fault("auth_basic_challenge")
class AuthBasicChallenge(PetStore):
    def challenge(self, presented: bool, operation: str) -> dict[str, str]:
        return {"WWW-Authenticate": 'Basic realm="petstore"'}


# -- which Authorization headers are accepted --------------------------------------------------------------


def bearer(header: str) -> str | None:
    """The token of a Bearer credential (the scheme in any case), None under another scheme."""
    scheme, token = credentials(header)
    return token if scheme.lower() == "bearer" else None


class AcceptsToken(Rules):
    """Accepts, besides the key, every bearer token ``also`` accepts."""

    def also(self, token: str, operation: str) -> bool:
        raise NotImplementedError

    def accepted(self, header: str, operation: str) -> bool:
        token = bearer(header)
        return (token is not None and self.also(token, operation)) or super().accepted(header, operation)


@fault("auth_any_key")
class AuthAnyKey(AcceptsToken):
    def also(self, token: str, operation: str) -> bool:
        return token != ""


@fault("auth_orders_any_token")
class AuthOrdersAnyToken(AcceptsToken):
    def also(self, token: str, operation: str) -> bool:
        return token != "" and operation == "orders"


@fault("auth_empty_token")
class AuthEmptyToken(AcceptsToken):
    def also(self, token: str, operation: str) -> bool:
        return token == ""


@fault("auth_key_prefix")
class AuthKeyPrefix(AcceptsToken):
    def also(self, token: str, operation: str) -> bool:
        return token != "" and self.api_key.startswith(token)


@fault("auth_key_case_insensitive")
class AuthKeyCaseInsensitive(AcceptsToken):
    def also(self, token: str, operation: str) -> bool:
        return token.lower() == self.api_key.lower()


@fault("auth_key_extra_char")
class AuthKeyExtraChar(AcceptsToken):
    def also(self, token: str, operation: str) -> bool:
        return len(token) == len(self.api_key) + 1 and token.startswith(self.api_key)


@fault("auth_accepts_bare_key")
class AuthAcceptsBareKey(Rules):
    def accepted(self, header: str, operation: str) -> bool:
        # compare_digest takes str only when ASCII: a header with another character raises (a 500).
        return hmac.compare_digest(header.strip(), self.api_key) or super().accepted(header, operation)


@fault("auth_accepts_basic")
class AuthAcceptsBasic(Rules):
    def accepted(self, header: str, operation: str) -> bool:
        scheme, token = credentials(header)
        return (scheme.lower() == "basic" and token != "") or super().accepted(header, operation)


@fault("auth_any_scheme")
class AuthAnyScheme(Rules):
    def accepted(self, header: str, operation: str) -> bool:
        _, token = credentials(header)
        return hmac.compare_digest(token.encode(), self.api_key.encode()) or super().accepted(header, operation)


@fault("auth_case_sensitive_scheme")
class AuthCaseSensitiveScheme(Rules):
    def accepted(self, header: str, operation: str) -> bool:
        scheme, _ = credentials(header)
        return scheme == "Bearer" and super().accepted(header, operation)


@fault("auth_scheme_by_order")
class AuthSchemeByOrder(Rules):
    def accepted(self, header: str, operation: str) -> bool:
        # Found by mutation testing: Basic, ApiKey and Bear pass, as they sort before "bearer".
        scheme, token = credentials(header)
        return scheme.lower() <= "bearer" and hmac.compare_digest(token.encode(), self.api_key.encode())


@fault("auth_read_rejects_valid_key")
class AuthReadRejectsValidKey(Rules):
    def accepted(self, header: str, operation: str) -> bool:
        return operation != "read" and super().accepted(header, operation)


@fault("auth_orders_rejects_valid_key")
class AuthOrdersRejectsValidKey(Rules):
    def accepted(self, header: str, operation: str) -> bool:
        return operation != "orders" and super().accepted(header, operation)
