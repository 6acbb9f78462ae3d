"""Endpoints: a URL path bound to what it serves and how.

An `Endpoint` names a registry of tools, resources and prompts and builds, once, the
protocol core's `MessageHandler` for it. Transports (the HTTP view today; WebSocket and
stdio later) take an endpoint and serve it. The handler is rebuilt when `MCP_DJANGO`
changes, so tests that override settings see the change.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from django.utils.module_loading import import_string

from mcp_django.conf import mcp_settings
from mcp_django.interceptors import handler_options
from mcp_django.protocol import MessageHandler
from mcp_django.protocol.inputs import RequestStateCodec
from mcp_django.sessions import SessionStore, get_session_store

if TYPE_CHECKING:
    from mcp_django.registry import Registry

__all__ = ["Endpoint", "get_endpoint", "mounted_endpoints"]

_endpoints: weakref.WeakSet[Endpoint] = weakref.WeakSet()


class Endpoint:
    """One MCP endpoint: a path, the registry it serves, and its access and session rules.

    Args:
        path: the URL path it is mounted at, without leading slash (`"mcp"`).
        registry: the `Registry` to serve, or a dotted path to one (resolved on first use).
        name: a short, unique name; sessions remember it, so a session opened here is
            unknown on every other endpoint.
        allow_anonymous: whether callers without a Django user may use it. Enforced once
            authentication arrives; until then every caller is let in.
        sessions: open handshake-era sessions on `initialize`; None follows `MCP_DJANGO["SESSIONS"]`.
        interceptors: this endpoint's interceptor list; None follows `MCP_DJANGO["INTERCEPTORS"]`.
        interceptor_protocol: also serve the SEP-2624 `interceptors/list` and `interceptor/invoke`.
    """

    def __init__(
        self,
        path: str,
        *,
        registry: Registry | str,
        name: str,
        allow_anonymous: bool = False,
        sessions: bool | None = None,
        interceptors: list[Any] | None = None,
        interceptor_protocol: bool = False,
    ) -> None:
        self.path = path.strip("/")
        self.name = name
        self.allow_anonymous = allow_anonymous
        self._registry = registry
        self._sessions = sessions
        self.interceptors = interceptors
        self.interceptor_protocol = interceptor_protocol
        self._handler: MessageHandler | None = None
        _endpoints.add(self)

    def __repr__(self) -> str:
        return f"<Endpoint {self.name!r} at /{self.path}>"

    @property
    def registry(self) -> Registry:
        """The registry this endpoint serves."""
        if isinstance(self._registry, str):
            self._registry = import_string(self._registry)
        return self._registry  # type: ignore[return-value]  # resolved just above

    @property
    def sessions(self) -> bool:
        """Whether `initialize` opens a session here."""
        return bool(mcp_settings.SESSIONS) if self._sessions is None else self._sessions

    @property
    def session_store(self) -> SessionStore | None:
        """The store sessions are kept in, or None when this endpoint opens none."""
        return get_session_store() if self.sessions else None

    @property
    def handler(self) -> MessageHandler:
        """The protocol core serving this endpoint, built on first use."""
        if self._handler is None:
            self._handler = self.build_handler()
        return self._handler

    def build_handler(self) -> MessageHandler:
        """Build the `MessageHandler` for this endpoint from its registry and `MCP_DJANGO`."""
        return MessageHandler(
            self.registry.backend(),
            server_info=mcp_settings.SERVER_INFO,
            instructions=mcp_settings.INSTRUCTIONS,
            page_size=mcp_settings.PAGE_SIZE,
            cache_ttl_ms=mcp_settings.CACHE_TTL_MS,
            cache_scope=mcp_settings.CACHE_SCOPE,
            state_codec=RequestStateCodec(
                mcp_settings.signing_key("request-state"), ttl_seconds=mcp_settings.REQUEST_STATE_TTL
            ),
            client_request_timeout=mcp_settings.CLIENT_REQUEST_TIMEOUT,
            **self.interceptor_options(),
        )

    def interceptor_options(self) -> dict[str, Any]:
        """The `MessageHandler` arguments running this endpoint's interceptors (docs/interceptors.md)."""
        label = None if self.interceptors is None else f"Endpoint {self.name!r} interceptors"
        return handler_options(self.interceptors, protocol=self.interceptor_protocol, label=label)

    def reset(self) -> None:
        """Drop the built handler; the next request builds a fresh one."""
        self._handler = None


def _reset_endpoints() -> None:
    for endpoint in list(_endpoints):
        endpoint.reset()


mcp_settings.on_reload(_reset_endpoints)


def get_endpoint(name: str) -> Endpoint:
    """Return the endpoint the root URLconf mounts under `name` (its name, or its path).

    Transports that are not URL routes (WebSocket, stdio) find the endpoint they serve here.

    Raises:
        LookupError: no mounted endpoint has that name or path.
    """
    mounted = mounted_endpoints()
    for endpoint in mounted:
        if name in (endpoint.name, endpoint.path):
            return endpoint
    known = ", ".join(repr(endpoint.name) for endpoint in mounted) or "none"
    raise LookupError(f"No MCP endpoint is named {name!r} (mounted: {known})")


def mounted_endpoints() -> list[Endpoint]:
    """The endpoints the root URLconf mounts, in URL order (loading the URLconf mounts them)."""
    from django.urls import URLResolver, get_resolver

    found: list[Endpoint] = []

    def walk(patterns: Iterable[Any]) -> None:
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                walk(pattern.url_patterns)
                continue
            endpoint = getattr(pattern.callback, "view_initkwargs", {}).get("endpoint")
            if isinstance(endpoint, Endpoint) and endpoint not in found:
                found.append(endpoint)

    walk(get_resolver().url_patterns)
    return found
