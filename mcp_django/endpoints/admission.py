"""Admission: the one step every transport runs before it serves a request.

`Endpoint.admit()` turns what a transport knows of a caller — the Host it addressed, the Origin
of a browser page, its credentials — into an `Admission` (the principal and its scope), or raises
`Refused`, which carries the HTTP status, the message and the headers to answer with. The ASGI
fast path, the Django view, the WebSocket consumer and `mcp_stdio` all call it, so a transport
cannot forget a check. This module holds the pieces that need no endpoint: the Host and Origin
rules, running authentication classes on credentials, the 401's challenge, and the types; and `Access`,
the admission concern `Endpoint` is built on (its authenticators, `admit()`, the caller's scope).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit

from django.http.request import split_domain_port, validate_host
from django.utils.http import is_same_domain
from rest_framework.exceptions import APIException

from mcp_django.auth import (
    AuthenticationFailed,
    AuthRequest,
    authenticator_instances,
    first_recognised,
    is_authorization_only,
    needs_django_request,
)
from mcp_django.conf import django_allowed_hosts, django_csrf_trusted_origins, mcp_settings, normalize_origin
from mcp_django.endpoints.auth_cache import auth_cache, credential_digest, credential_lifetime
from mcp_django.protocol import Connection
from mcp_django.protocol.context import RequestContext
from mcp_django.runtime.executor import run_sync
from mcp_django.scopes import (
    ANONYMOUS_SCOPE,
    Scope,
    is_authenticated,
    limit_scope,
    remember_scope,
    remembered_scope,
)

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
    from django.http import HttpRequest

    from mcp_django.endpoints.overlay import Overlay

LOCAL_HOSTS: Final = frozenset({"localhost", "127.0.0.1", "::1"})
ADMITTED_SCOPE: Final = "mcp_django.admitted_scope"
"""The key of `Connection.extra` under which a one-request connection carries its admitted scope."""


@dataclasses.dataclass(frozen=True, slots=True)
class Credentials:
    """What a caller presented, as a transport read it.

    Args:
        headers: the request's (or WebSocket handshake's) headers, looked up by lower-case name;
            the endpoint's authentication classes read `Authorization` from them.
        request: the Django request, when the transport is a Django view (session authentication
            and other classes that read more than headers need it).
        user: a user the transport already established: Channels' session-cookie user on a
            WebSocket, `mcp_stdio --user`. Used when the authentication classes recognise nothing;
            a caller admitted as this user from a browser `Origin` must pass the CSRF origin rule
            (`check_cookie_origin`), since a browser sends cookies whatever page opened the connection.
        secure: whether the connection came over TLS (`wss`, `https`, or the proxy header of
            `SECURE_PROXY_SSL_HEADER`): the scheme of the caller's own origin in that rule.
        address: the caller's network address (`REMOTE_ADDR`, the ASGI scope's `client`), when the
            transport knows it: anonymous callers' quotas count per address.
    """

    headers: Mapping[str, str] = dataclasses.field(default_factory=dict)
    request: HttpRequest | None = None
    user: AbstractBaseUser | AnonymousUser | None = None
    secure: bool = False
    address: str | None = None


CLIENT_ADDRESS: Final = "mcp_django.client_address"
"""`Connection.extra` key of the caller's network address (`Credentials.address`): anonymous quotas count by it."""


@dataclasses.dataclass(frozen=True, slots=True)
class Admission:
    """A caller let in: who it is (None when anonymous) and how far it reaches."""

    principal: AbstractBaseUser | None
    scope: Scope


class Refused(Exception):
    """A caller turned away at admission, with what to answer.

    Args:
        status: the HTTP status (400 bad Host, 401 no or bad credentials, 403 Origin or CSRF).
        message: the text of the JSON-RPC error (`"Unauthorized: ..."`).
        headers: headers of the answer (`WWW-Authenticate` on a 401).
    """

    def __init__(self, status: int, message: str, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = dict(headers or {})


def check_host(host: str | None) -> None:
    """Refuse a `Host` that `ALLOWED_HOSTS` does not admit, as Django's `HttpRequest.get_host` would.

    None (stdio, or an ASGI server that gave no Host) passes.

    Raises:
        Refused: 400.
    """
    if host is None:
        return
    global _admitted_hosts
    allowed = django_allowed_hosts()
    if _admitted_hosts[0] is not allowed:  # ALLOWED_HOSTS changed: what it admitted before counts no more
        _admitted_hosts = (allowed, set())
    if host in _admitted_hosts[1]:
        return
    domain, _port = split_domain_port(host)
    if not domain or not validate_host(domain, allowed):
        raise Refused(400, "Bad Request: invalid Host header")
    if len(_admitted_hosts[1]) < _ADMITTED_HOSTS_KEPT:
        _admitted_hosts[1].add(host)


_ADMITTED_HOSTS_KEPT: Final = 256
"""Host values remembered as admitted (a wildcard in `ALLOWED_HOSTS` admits any number; only the first are kept)."""
_admitted_hosts: tuple[list[str] | None, set[str]] = (None, set())


def origin_allowed(origin: str, allowed: frozenset[str]) -> bool:
    """True for a localhost origin (any port), or one listed in `allowed` (`"*"` admits all)."""
    if "*" in allowed:
        return True
    key = normalize_origin(origin)
    if key is None:
        return False
    host = urlsplit(key).hostname
    return host in LOCAL_HOSTS or key in allowed


def check_origin(origin: str | None) -> None:
    """Refuse a browser `Origin` that `MCP_DJANGO["ALLOWED_ORIGINS"]` does not admit (None passes).

    Raises:
        Refused: 403.
    """
    if origin is not None and not origin_allowed(origin, allowed_origins()):
        raise Refused(403, "Forbidden: invalid Origin header")


def check_cookie_origin(origin: str, host: str | None, secure: bool) -> None:
    """Refuse a browser `Origin` that Django's CSRF protection would refuse for a cookie-authenticated caller.

    The rule of `CsrfViewMiddleware`: the origin of the site itself (the scheme, and the `Host`
    the caller addressed), or an entry of `CSRF_TRUSTED_ORIGINS` (`https://*.example.com` admits
    the subdomains). Localhost on another port is another origin: cookies are shared across
    ports, so any page served on the machine could otherwise act as the logged-in user.

    Raises:
        Refused: 403.
    """
    if host is not None and origin == f"{'https' if secure else 'http'}://{host}":
        return
    trusted = django_csrf_trusted_origins()
    if origin in trusted:
        return
    try:
        parts = urlsplit(origin)
    except ValueError:
        parts = None
    if parts is not None and any(
        is_same_domain(parts.netloc, urlsplit(entry).netloc.lstrip("*"))
        for entry in trusted
        if "*" in entry and urlsplit(entry).scheme == parts.scheme
    ):
        return
    raise Refused(403, "Forbidden: Origin checking failed - the origin does not match any trusted origins.")


_allowed_origins: frozenset[str] | None = None


def allowed_origins() -> frozenset[str]:
    """The normalized `MCP_DJANGO["ALLOWED_ORIGINS"]`, computed once per settings change."""
    global _allowed_origins
    if _allowed_origins is None:
        entries = mcp_settings.ALLOWED_ORIGINS or ()
        _allowed_origins = frozenset(
            "*" if entry == "*" else (normalize_origin(entry) or "") for entry in entries if isinstance(entry, str)
        )
    return _allowed_origins


def _forget_allowed_origins() -> None:
    global _allowed_origins
    _allowed_origins = None


mcp_settings.on_reload(_forget_allowed_origins)


def principal_of(user: Any) -> Any:
    """`user` when it is an authenticated user, else None (an anonymous caller)."""
    return user if user is not None and getattr(user, "is_authenticated", False) is True else None


async def authenticate_credentials(
    authenticators: Sequence[Any], credentials: Credentials, *, audience: Hashable = None
) -> Any:
    """The authenticated user the credentials name, or None for an anonymous caller.

    The authentication classes (an endpoint's `authenticators`) run first, as in a DRF view; when none recognises
    the credentials, the user the transport already knows (`credentials.user`) is the caller.
    Classes that cannot recognise this request are not run: header-only classes without an
    `Authorization` header, session authentication without a Django request. A header-only
    class's result comes from `mcp_django.endpoints.auth_cache` while it is there (no query, no thread),
    kept per `audience` (the endpoint and the Host it was addressed by: a credential accepted
    for one endpoint, such as an OAuth token bound to it, is not taken from the cache for another).

    Raises:
        AuthenticationFailed: credentials were offered and refused.
        rest_framework.exceptions.APIException: another refusal (session authentication's CSRF check).
    """
    authorization = credentials.headers.get("authorization") or None
    candidates = [
        authenticator
        for authenticator in authenticators
        if authorization is not None or not is_authorization_only(authenticator)
        if credentials.request is not None or not needs_django_request(authenticator)
    ]
    if not candidates:
        return principal_of(credentials.user)
    key = None
    if authorization is not None and is_authorization_only(candidates[0]) and auth_cache.ttl > 0:
        classes = tuple(type(authenticator) for authenticator in authenticators)
        key = (audience, classes, credential_digest(authorization))
        cached = auth_cache.credential(key)
        if cached is not None:
            return cached
    generation = auth_cache.generation
    request = (
        AuthRequest(credentials.request)
        if credentials.request is not None
        else AuthRequest.from_headers(credentials.headers)
    )
    found = await run_sync(first_recognised, candidates, request)
    if found is None:
        return principal_of(credentials.user)
    user, auth, authenticator = found
    if key is not None and all(map(is_authorization_only, candidates[: candidates.index(authenticator) + 1])):
        lifetime = credential_lifetime(authenticator, user, auth)
        auth_cache.remember_credential(key, user, generation=generation, lifetime=lifetime)
    return user


def bearer_challenge(resource_metadata: str | None, invalid_token: bool) -> dict[str, str]:
    """The `WWW-Authenticate` header of a 401: `Bearer`, with `error="invalid_token"` (RFC 6750) when
    credentials were offered and refused, and the RFC 9728 `resource_metadata` URL when known."""
    parameters = []
    if invalid_token:
        parameters.append('error="invalid_token"')
    if resource_metadata:
        parameters.append(f'resource_metadata="{resource_metadata}"')
    return {"WWW-Authenticate": "Bearer " + ", ".join(parameters) if parameters else "Bearer"}


def admitted_scope(connection: Connection) -> Scope | None:
    """The scope admission worked out for a connection carrying one request (HTTP); None on a long-lived one.

    Whoever runs per operation (the scope resolver, the overlay's hooks) knows from it that admission
    just ran for this request, so the caller's scope and the overlay's state are fresh.
    """
    scope: Scope | None = connection.extra.get(ADMITTED_SCOPE)
    return scope


class Access:
    """The admission concern of an `Endpoint`: who may call it, and with which scope.

    `Endpoint` is built on it; `admit()` is the one admission step of every transport. It needs of the
    endpoint its `path`, `allow_anonymous`, its authentication classes, its `overlay` and `prepare()`.
    """

    path: str
    allow_anonymous: bool
    _authentication_classes: list[type | str] | None
    _authenticators: list[Any] | None

    @property
    def overlay(self) -> Overlay:
        raise NotImplementedError

    async def prepare(self) -> None:
        """Get the endpoint's sources ready to serve an admitted caller (`Endpoint.prepare`)."""

    @property
    def authenticators(self) -> list[Any]:
        """Instances of this endpoint's DRF authentication classes, in order."""
        if self._authenticators is None:
            classes = self._authentication_classes
            if classes is None:
                classes = list(mcp_settings.DEFAULT_AUTHENTICATION_CLASSES)
            self._authenticators = authenticator_instances(classes, endpoint=self)
        return self._authenticators

    async def admit(
        self,
        *,
        host: str | None,
        origin: str | None,
        credentials: Credentials,
        resource_metadata: str | None = None,
    ) -> Admission:
        """Let a caller in, or refuse it: the one admission step of every transport.

        Checks, in order: the Host against `ALLOWED_HOSTS`, a browser Origin against
        `MCP_DJANGO["ALLOWED_ORIGINS"]`, then the credentials with the endpoint's authentication
        classes, and works out the caller's scope. A caller who is the user the transport took from
        a cookie (`Credentials.user`) must also pass Django's CSRF origin rule when a browser Origin
        came with it (`check_cookie_origin`). It also brings the overlay (the admin's state) up to
        date (throttled: no query in the steady state), and last gets the endpoint's sources ready
        (`prepare`: a remote server that is down is no admission failure).

        Args:
            host: the `Host` header (None where there is none: stdio).
            origin: the `Origin` header, if any.
            credentials: what the caller presented.
            resource_metadata: the absolute URL of the endpoint's RFC 9728 metadata, named in the
                `WWW-Authenticate` header of a 401.

        Raises:
            Refused: 400 for a bad Host, 403 for a bad Origin or a failed CSRF check, 401 for
                refused or missing credentials.
        """
        check_host(host)
        check_origin(origin)
        await self.overlay.refresh()
        try:
            principal = await self.authenticate(credentials)
        except AuthenticationFailed as error:
            raise Refused(401, f"Unauthorized: {error.detail}", bearer_challenge(resource_metadata, True)) from None
        except APIException as error:  # PermissionDenied: session authentication's CSRF check
            raise Refused(403, f"Forbidden: {error.detail}") from None
        if origin is not None and principal is not None and principal is credentials.user:
            # The transport's own user (a session cookie): what DRF's SessionAuthentication checks over HTTP.
            check_cookie_origin(origin, host, credentials.secure)
        scope = await self.scope_of(principal)
        if scope is None:
            message = "Unauthorized: Authentication credentials were not provided."
            raise Refused(401, message, bearer_challenge(resource_metadata, False))
        await self.prepare()
        return Admission(principal, scope)

    async def authenticate(self, credentials: Credentials) -> Any:
        """The authenticated user the credentials name, or None for an anonymous caller.

        Runs this endpoint's authentication classes (`authenticate_credentials`).

        Raises:
            AuthenticationFailed: credentials were offered and refused.
            rest_framework.exceptions.APIException: another refusal (session authentication's CSRF check).
        """
        audience = (self.path, credentials.headers.get("host"))
        return await authenticate_credentials(self.authenticators, credentials, audience=audience)

    async def scope_of(self, principal: Any) -> Scope | None:
        """The scope a principal has here: its groups' for a user, USER for anonymous callers if allowed, else None."""
        if is_authenticated(principal):
            return limit_scope(await auth_cache.scope_of(principal), principal)
        return ANONYMOUS_SCOPE if self.allow_anonymous else None

    async def resolve_scope(self, ctx: RequestContext) -> Scope | None:
        """The caller's scope for this request, worked out once per request (the backends' `ScopeResolver`)."""
        known, scope = remembered_scope(ctx)
        if not known:
            admitted = admitted_scope(ctx.connection)
            scope = admitted if admitted is not None else await self.scope_of(ctx.principal)
            remember_scope(ctx, scope)
        return scope
