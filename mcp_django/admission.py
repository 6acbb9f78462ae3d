"""Admission: the one step every transport runs before it serves a request.

`Endpoint.admit()` turns what a transport knows of a caller — the Host it addressed, the Origin
of a browser page, its credentials — into an `Admission` (the principal and its scope), or raises
`Refused`, which carries the HTTP status, the message and the headers to answer with. The ASGI
fast path, the Django view, the WebSocket consumer and `mcp_stdio` all call it, so a transport
cannot forget a check. This module holds the pieces that need no endpoint: the Host and Origin
rules and the types.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit

from django.http.request import split_domain_port, validate_host

from mcp_django.conf import django_allowed_hosts, mcp_settings, normalize_origin
from mcp_django.scopes import Scope

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
    from django.http import HttpRequest

__all__ = [
    "LOCAL_HOSTS",
    "Admission",
    "Credentials",
    "Refused",
    "allowed_origins",
    "check_host",
    "check_origin",
    "origin_allowed",
]

LOCAL_HOSTS: Final = frozenset({"localhost", "127.0.0.1", "::1"})


@dataclasses.dataclass(frozen=True, slots=True)
class Credentials:
    """What a caller presented, as a transport read it.

    Args:
        headers: the request's (or WebSocket handshake's) headers, looked up by lower-case name;
            the endpoint's authentication classes read `Authorization` from them.
        request: the Django request, when the transport is a Django view (session authentication
            and other classes that read more than headers need it).
        user: a user the transport already established: Channels' session-cookie user on a
            WebSocket, `mcp_stdio --user`. Used when the authentication classes recognise nothing.
    """

    headers: Mapping[str, str] = dataclasses.field(default_factory=dict)
    request: HttpRequest | None = None
    user: AbstractBaseUser | AnonymousUser | None = None


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
    domain, _port = split_domain_port(host)
    if not domain or not validate_host(domain, django_allowed_hosts()):
        raise Refused(400, "Bad Request: invalid Host header")


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
