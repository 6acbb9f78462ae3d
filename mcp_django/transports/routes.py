"""Which requests the fast paths (`mcp_django.asgi`, `mcp_django.wsgi`) answer themselves, and what they send with them.

The routes come from `urls.py`: a request path is resolved with Django's URL resolver once, and the
answer (this endpoint's transport, a public view of the package, or "not ours") kept per path in a
`RouteTable`, forgotten when `ROOT_URLCONF` or `FORCE_SCRIPT_NAME` changes. `Route.served_by_view`
says when a request for an endpoint still goes to its Django view (`endpoint(..., fast_path=False)`,
authentication that needs a Django request or reads the session cookie): docs/fast-path.md.
"""

from __future__ import annotations

import weakref
from typing import Any, Final, Literal

from django.core.signals import setting_changed

from mcp_django.auth import REQUEST, SESSION, credentials_read
from mcp_django.conf import HTTPSettings
from mcp_django.endpoints import Endpoint
from mcp_django.transports.http import StreamableHTTP
from mcp_django.transports.public import is_public_view

ROUTE_CACHE_SIZE: Final = 1024
"""How many request paths a fast path remembers (MCP or not); the oldest is forgotten first."""

SECURITY_HEADERS: Final[tuple[tuple[str, str], ...]] = (
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
    # A JSON answer is never a document: nothing in it may load, and no page may frame it.
    ("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'"),
)
"""Sent on every fast-path answer (docs/fast-path.md says which middleware each one stands in for)."""

NO_STORE: Final = ("Cache-Control", "no-store")
"""Sent on every fast-path answer that sets no `Cache-Control` of its own."""

PUBLIC: Final = "public"
"""What the route table holds for a path of a public view (`transports.public`): served by Django, body bounded."""


class Route:
    """A path of an MCP endpoint: its transport, whether the fast path serves it, and what its
    authentication classes need."""

    __slots__ = ("authenticators", "cookie_to_view", "endpoint", "fast", "to_view", "transport")

    def __init__(self, transport: StreamableHTTP, *, fast: bool) -> None:
        self.transport = transport
        self.endpoint: Endpoint = transport.endpoint
        self.fast = fast
        self.authenticators: list[Any] | None = None
        self.to_view = False
        self.cookie_to_view = False

    def served_by_view(self, headers: dict[str, str]) -> bool:
        """Whether this request needs the Django view (opted out, or its authentication needs a Django request)."""
        if not self.fast:
            return True
        authenticators = self.endpoint.authenticators
        if authenticators is not self.authenticators:  # first request, or the endpoint was reset
            reads = {credentials_read(type(authenticator)) for authenticator in authenticators}
            self.to_view = REQUEST in reads
            self.cookie_to_view = SESSION in reads
            self.authenticators = authenticators
        return self.to_view or (self.cookie_to_view and "cookie" in headers)


_tables: weakref.WeakSet[RouteTable] = weakref.WeakSet()


def _forget_routes(*, setting: str, **kwargs: Any) -> None:
    if setting in ("ROOT_URLCONF", "FORCE_SCRIPT_NAME"):
        for table in list(_tables):
            table.clear()


setting_changed.connect(_forget_routes)


class RouteTable:
    """The routes a fast path has resolved: request path (after the script name) -> `Route`, `PUBLIC` or None."""

    __slots__ = ("__weakref__", "_routes")

    def __init__(self) -> None:
        self._routes: dict[str, Route | Literal["public"] | None] = {}
        _tables.add(self)

    def __len__(self) -> int:
        return len(self._routes)

    def clear(self) -> None:
        """Forget every route (the URLconf changed)."""
        self._routes.clear()

    def route(self, path_info: str, script_name: str) -> Route | Literal["public"] | None:
        """What serves `path_info` under `script_name`: an endpoint's `Route`, `PUBLIC`, or None (Django's own)."""
        key = path_info if not script_name else f"{script_name}\0{path_info}"
        try:
            return self._routes[key]
        except KeyError:
            return self._resolve(key, path_info)

    def _resolve(self, key: str, path_info: str) -> Route | Literal["public"] | None:
        """Resolve a path with Django's URL resolver; remember whether it is a fast-path endpoint or a public view."""
        from django.urls import Resolver404, get_resolver

        route: Route | Literal["public"] | None = None
        try:
            match = get_resolver().resolve(path_info)  # the root URLconf, as Django's handler resolves it
        except Resolver404:
            pass
        else:
            initkwargs = getattr(match.func, "view_initkwargs", None) or {}
            endpoint, transport = initkwargs.get("endpoint"), initkwargs.get("transport")
            if isinstance(endpoint, Endpoint) and isinstance(transport, StreamableHTTP):
                route = Route(transport, fast=endpoint.fast_path)
            elif is_public_view(match.func):
                route = PUBLIC
        routes = self._routes
        if len(routes) >= ROUTE_CACHE_SIZE:
            del routes[next(iter(routes))]
        routes[key] = route
        return route


def is_secure(headers: dict[str, str], scheme: str | None, config: HTTPSettings) -> bool:
    """`HttpRequest.is_secure()`: the proxy's header when `SECURE_PROXY_SSL_HEADER` names one, else the scheme."""
    if config.proxy_ssl_header is not None:
        name, secure_value = config.proxy_ssl_header
        value = headers.get(name)
        if value is not None:
            return value.split(",", 1)[0].strip() == secure_value
    return scheme == "https"


def site_of(headers: dict[str, str], host: str | None, secure: bool, config: HTTPSettings) -> str:
    """The site's root as the client reached it (`https://host/`): `X-Forwarded-Host` where Django trusts it."""
    site_host = headers.get("x-forwarded-host", host) if config.use_x_forwarded_host else host
    return f"{'https' if secure else 'http'}://{site_host}/"


def server_host(name: object, port: object, secure: bool) -> str | None:
    """The host Django falls back to without a `Host` header: the server's name and non-default port."""
    if not name:
        return None
    if port is None or str(port) in ("", "443" if secure else "80"):
        return str(name)
    return f"{name}:{port}"
