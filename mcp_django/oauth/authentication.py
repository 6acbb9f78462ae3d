"""`OAuth2Authentication`: MCP endpoints accept the access tokens this site issued, for them and no other.

A DRF authentication class, like the others an endpoint runs at admission. It recognises
`Authorization: Bearer <token>` when the token is one of django-oauth-toolkit's access tokens, and
refuses it (401, `error="invalid_token"`) when it has expired, was issued for another resource than
this endpoint (RFC 8707: no token passthrough), carries no MCP scope (a registration token), or its
user is inactive. A bearer value it does not know is left to the next class (a DRF token); one
without the prefix of this site's tokens (`mcp_django.oauth.tokens`) costs no query.

Its credential is the `Authorization` header alone, so admission caches the result per endpoint and
Host (`mcp_django.endpoints.auth_cache`), never past the token's expiry; revoking a token (the revocation
endpoint, the admin) deletes it, which drops the cached credentials on every worker.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Mapping
from typing import Any, ClassVar, Final
from urllib.parse import urlsplit

from django.utils import timezone
from oauth2_provider.models import get_access_token_model
from oauth2_provider.utils import parse_bearer_token
from rest_framework import authentication

from mcp_django.auth import AUTHORIZATION, AuthenticationFailed
from mcp_django.endpoints import canonical_path, endpoint_registry
from mcp_django.oauth.grants import scope_reached
from mcp_django.oauth.tokens import ACCESS_TOKEN_PREFIX
from mcp_django.scopes import SCOPE_LIMIT

_DEFAULT_PORTS = {"http": 80, "https": 443}

CLIENT_CREDENTIALS_EXTENSION: Final = "io.modelcontextprotocol/oauth-client-credentials"
"""The MCP extension of machine clients (SEP-1046), under `capabilities.extensions`."""


class OAuth2Authentication(authentication.BaseAuthentication):
    """Accept an OAuth access token issued by this site for this endpoint; `(user, token)` or None.

    Put it before `mcp_django.auth.TokenAuthentication`: both read `Bearer`, and a DRF token class
    refuses a value it does not know instead of passing it on.
    """

    mcp_credentials: ClassVar[str] = AUTHORIZATION
    mcp_endpoint: Any = None
    """The endpoint this instance authenticates for (set by the endpoint); None accepts no token."""

    def authenticate(self, request: Any) -> tuple[Any, Any] | None:
        """Return `(user, access token)` for a token this site issued, None for any other credential.

        Raises:
            AuthenticationFailed: an expired token, one issued for another resource, without an MCP
                scope, or of an inactive user.
        """
        raw = parse_bearer_token(request.META.get("HTTP_AUTHORIZATION", ""))
        if raw is None or not raw.startswith(ACCESS_TOKEN_PREFIX):
            return None  # not one of ours (a DRF token): no query
        checksum = hashlib.sha256(raw.encode("utf-8", "surrogateescape")).hexdigest()
        model = get_access_token_model()
        token = model.objects.select_related("user", "application").filter(token_checksum=checksum).first()
        if token is None:
            return None
        if token.is_expired():
            raise AuthenticationFailed("The access token has expired.")
        reached = scope_reached(token.scope.split())
        if reached is None or token.user is None:
            raise AuthenticationFailed("The access token grants no MCP scope.")
        if not resource_matches(token.resource, self.mcp_endpoint, addressed_host(request.META)):
            raise AuthenticationFailed("The access token was not issued for this endpoint.")
        if not token.user.is_active:
            raise AuthenticationFailed("User inactive or deleted.")
        principal = copy.copy(token.user)
        setattr(principal, SCOPE_LIMIT, reached)
        return principal, token

    def authenticate_header(self, request: Any) -> str:
        return "Bearer"

    def mcp_credential_lifetime(self, user: Any, auth: Any) -> float:
        """Seconds until the access token expires: admission keeps it no longer."""
        return float((auth.expires - timezone.now()).total_seconds())


def resource_matches(resources: Any, endpoint: Any, host: str | None) -> bool:
    """True when one of a token's resource indicators names `endpoint`, as reached through `host`.

    The resource's path must be the endpoint's mounted path, and its host and port those the request
    was addressed to (an omitted port is the scheme's default). A token without a resource (issued to
    no endpoint) names none, and a request addressed to no host (`host` None) matches none.
    """
    if endpoint is None or not isinstance(resources, list):
        return False
    try:
        mounted = canonical_path(endpoint_registry().path_of(endpoint))
    except LookupError:
        return False
    return any(_names(resource, mounted, host) for resource in resources)


def _names(resource: Any, mounted: str, host: str | None) -> bool:
    if not isinstance(resource, str):
        return False
    try:
        parts = urlsplit(resource)
    except ValueError:
        return False
    if parts.scheme not in _DEFAULT_PORTS or not parts.hostname or canonical_path(parts.path) != mounted:
        return False
    if not host:
        return False  # a token bound to a host is never taken without one: no Host is no way around it
    addressed = urlsplit(f"//{host}")
    try:
        token_port = parts.port or _DEFAULT_PORTS[parts.scheme]
        request_port = addressed.port or _DEFAULT_PORTS[parts.scheme]
    except ValueError:
        return False
    return addressed.hostname == parts.hostname.lower() and request_port == token_port


def addressed_host(meta: Mapping[str, Any]) -> str | None:
    """The host a request was addressed to: its `Host`, else (a Django request) the server's name and
    port as Django's `get_host()` falls back to them; None when there is neither (the fast path)."""
    host = meta.get("HTTP_HOST")
    if host:
        return str(host)
    name = meta.get("SERVER_NAME")
    if not name:
        return None
    port = str(meta.get("SERVER_PORT") or "")
    default = "443" if meta.get("wsgi.url_scheme") == "https" else "80"
    return str(name) if port in ("", default) else f"{name}:{port}"


def accepts_oauth(endpoint: Any) -> bool:
    """True when the endpoint runs `OAuth2Authentication` (its metadata then names this authorization server)."""
    return any(isinstance(authenticator, OAuth2Authentication) for authenticator in endpoint.authenticators)


def target_problem(resources: list[str], host: str | None) -> str | None:
    """Why a token may not be issued for `resources` (RFC 8707) through `host`, else None.

    Each must name an MCP endpoint of this site that is not anonymous and accepts these tokens, on
    the host the request was addressed to; at least one is required.
    """
    if not resources:
        return "Name the MCP endpoint the token is for in the resource parameter (RFC 8707)."
    for resource in resources:
        try:
            endpoint = endpoint_registry().at(canonical_path(urlsplit(resource).path))
        except ValueError:  # not a URI at all
            endpoint = None
        if (
            endpoint is None
            or endpoint.allow_anonymous
            or not accepts_oauth(endpoint)
            or not resource_matches([resource], endpoint, host)
        ):
            return f"{resource} is not an MCP endpoint of this site that accepts OAuth tokens."
    return None
