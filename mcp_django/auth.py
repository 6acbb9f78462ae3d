"""Authentication: who is calling, decided by Django REST framework authentication classes.

Each endpoint runs the classes of `MCP_DJANGO["DEFAULT_AUTHENTICATION_CLASSES"]` (or its own
`authentication_classes`) on every request, the first one that recognises credentials
wins, exactly as in a DRF view — session, token, basic, or any third-party class such as
JWT. `TokenAuthentication` here is DRF's token authentication accepting both
`Authorization: Bearer <key>` (what MCP clients send) and `Authorization: Token <key>`.

Only a thin request object is built, not DRF's full `Request`: authentication classes read
`request.META` and, for session authentication, `request._request`. `AuthRequest` offers
both for a Django request, and can be built from bare headers, so a transport that is not a
Django view (an ASGI fast path) authenticates the same way.

What a class reads of a request (`credentials_read`) decides where it can run and what can be
kept: a class that reads the headers alone (DRF's token and basic authentication, this module's
token authentication, simplejwt, knox, or a class that says `mcp_credentials = "headers"`) is
served on the ASGI fast path; one whose credential is the `Authorization` header alone (the known
ones, or `mcp_credentials = "authorization"`) is also cached per header (`mcp_django.endpoints.auth_cache`)
and not run at all for a request without that header.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from django.http.request import HttpHeaders
from django.utils.module_loading import import_string
from rest_framework import authentication, exceptions

from mcp_django.runtime.executor import run_sync

__all__ = [
    "AUTHORIZATION",
    "HEADERS",
    "KNOWN_CREDENTIALS",
    "REQUEST",
    "SESSION",
    "AuthRequest",
    "AuthenticationFailed",
    "TokenAuthentication",
    "aauthenticate",
    "authenticate",
    "authenticator_instances",
    "credentials_read",
    "first_recognised",
    "is_authorization_only",
    "needs_django_request",
]

AuthenticationFailed = exceptions.AuthenticationFailed
"""Raised by an authentication class for credentials it recognises but refuses (answered 401)."""


class TokenAuthentication(authentication.TokenAuthentication):
    """DRF token authentication (`rest_framework.authtoken`) accepting `Bearer <key>` as well as `Token <key>`."""

    keywords: tuple[str, ...] = ("Bearer", "Token")

    def authenticate(self, request: Any) -> tuple[Any, Any] | None:
        """Return `(user, token)` for a valid key, None when the header is not a token header.

        Raises:
            AuthenticationFailed: a token header with a malformed, unknown or inactive key.
        """
        parts = authentication.get_authorization_header(request).split()
        if not parts or parts[0].lower() not in {keyword.lower().encode() for keyword in self.keywords}:
            return None
        if len(parts) != 2:
            raise AuthenticationFailed("Invalid token header: send 'Authorization: Bearer <key>'.")
        try:
            key = parts[1].decode()
        except UnicodeError:
            raise AuthenticationFailed("Invalid token header: the key contains invalid characters.") from None
        return self.authenticate_credentials(key)  # type: ignore[no-any-return]  # DRF is untyped

    def authenticate_header(self, request: Any) -> str:
        return "Bearer"


class AuthRequest:
    """The part of a request DRF authentication classes read: `META`, `headers`, `_request`, the rest of the request.

    Args:
        request: the Django request, when there is one.
        meta: the WSGI-style environ (`HTTP_AUTHORIZATION`, ...) when there is no Django request.
    """

    def __init__(self, request: Any = None, *, meta: Mapping[str, Any] | None = None) -> None:
        self._request = request if request is not None else self
        self.META: dict[str, Any] = request.META if request is not None else dict(meta or {})
        self.headers: Mapping[str, str] = request.headers if request is not None else HttpHeaders(self.META)

    @classmethod
    def from_headers(cls, headers: Mapping[str, str]) -> AuthRequest:
        """Build one from HTTP headers alone (names in any case)."""
        meta = {f"HTTP_{name.upper().replace('-', '_')}": value for name, value in headers.items()}
        return cls(meta=meta)

    def __getattr__(self, name: str) -> Any:
        request = self.__dict__.get("_request")
        if request is None or request is self:
            raise AttributeError(name)
        return getattr(request, name)


def authenticator_instances(classes: Iterable[type | str], *, endpoint: Any = None) -> list[Any]:
    """Instantiate authentication classes given as classes or dotted paths.

    A class with an `mcp_endpoint` attribute is told the endpoint it authenticates for (it may
    accept only credentials issued for that endpoint: OAuth tokens bound to a resource, RFC 8707).
    """
    instances = [(import_string(entry) if isinstance(entry, str) else entry)() for entry in classes]
    for instance in instances:
        if endpoint is not None and hasattr(instance, "mcp_endpoint"):
            instance.mcp_endpoint = endpoint
    return instances


HEADERS: Final = "headers"
AUTHORIZATION: Final = "authorization"
SESSION: Final = "session"
REQUEST: Final = "request"
KNOWN_CREDENTIALS: Final[dict[str, str]] = {
    "mcp_django.auth.TokenAuthentication": HEADERS,
    "rest_framework.authentication.TokenAuthentication": HEADERS,
    "rest_framework.authentication.BasicAuthentication": HEADERS,
    "rest_framework.authentication.SessionAuthentication": SESSION,
    "rest_framework_simplejwt.authentication.JWTAuthentication": HEADERS,
    "rest_framework_simplejwt.authentication.JWTStatelessUserAuthentication": HEADERS,
    "knox.auth.TokenAuthentication": HEADERS,
}
"""What the authentication classes mcp_django knows read, by dotted path (subclasses included)."""

_credentials_read: dict[type, str] = {}


def credentials_read(cls: type) -> str:
    """What an authentication class reads of a request: `"headers"`, `"session"` or `"request"`.

    A class says so with an `mcp_credentials` attribute; otherwise the first class of its MRO
    named in `KNOWN_CREDENTIALS` decides, and a class nobody knows is taken to need the whole
    Django request.

    - `"headers"`: only the request headers: served on the fast path. (A class declaring
      `"authorization"`, the `Authorization` header alone, reads headers too.)
    - `"session"`: Django's session, through the session cookie: requests carrying a `Cookie`
      header go to the Django view, where the session middleware has run; the others stay fast.
    - `"request"`: more of the Django request (its URL, body, `request.user`): every request of
      an endpoint with such a class goes to the Django view.
    """
    found = _credentials_read.get(cls)
    if found is None:
        declared = getattr(cls, "mcp_credentials", None)
        if declared in (HEADERS, SESSION, REQUEST):
            found = str(declared)
        elif declared == AUTHORIZATION:
            found = HEADERS
        else:
            names = (f"{klass.__module__}.{klass.__qualname__}" for klass in cls.__mro__)
            found = next((KNOWN_CREDENTIALS[name] for name in names if name in KNOWN_CREDENTIALS), REQUEST)
        _credentials_read[cls] = found
    return found


def is_authorization_only(authenticator: Any) -> bool:
    """True for a class whose credential is the `Authorization` header alone: its result may be cached per header.

    The header classes mcp_django knows (`KNOWN_CREDENTIALS`, subclasses included) and classes that
    declare `mcp_credentials = "authorization"`; not a class declaring `"headers"` (it may read
    another header, such as `X-API-Key`).
    """
    declared = getattr(type(authenticator), "mcp_credentials", None)
    if declared is not None:
        return bool(declared == AUTHORIZATION)
    return credentials_read(type(authenticator)) == HEADERS


def needs_django_request(authenticator: Any) -> bool:
    """True for session authentication, which finds its user on the Django request (none: it recognises nobody)."""
    return credentials_read(type(authenticator)) == SESSION


def first_recognised(authenticators: Iterable[Any], request: Any) -> tuple[Any, Any, Any] | None:
    """Run `authenticators` in order: `(user, auth, authenticator)` of the first that recognises `request`, else None.

    Sync: authentication classes query the database.

    Raises:
        AuthenticationFailed: credentials were offered and refused (answer 401).
        rest_framework.exceptions.PermissionDenied: e.g. session authentication's CSRF check failed (answer 403).
    """
    for authenticator in authenticators:
        result = authenticator.authenticate(request)
        if result is not None:
            return result[0], result[1], authenticator
    return None


def authenticate(authenticators: Iterable[Any], request: Any) -> Any:
    """Run `authenticators` in order on `request`; return the first user one recognises, else None.

    Sync: authentication classes query the database. Async callers use `aauthenticate`.

    Raises:
        AuthenticationFailed: credentials were offered and refused (answer 401).
        rest_framework.exceptions.PermissionDenied: e.g. session authentication's CSRF check failed (answer 403).
    """
    found = first_recognised(authenticators, request)
    return None if found is None else found[0]


async def aauthenticate(authenticators: Iterable[Any], request: Any) -> Any:
    """`authenticate` for async code, run where the ORM may run (`mcp_django.runtime.executor.run_sync`)."""
    return await run_sync(authenticate, authenticators, request)
