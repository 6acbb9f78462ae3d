"""WebSocket URL patterns for Channels: the endpoints of `mcp_django.urls`, served over WebSocket too.

Mount them beside the HTTP application in the project's `asgi.py`::

    from channels.auth import AuthMiddlewareStack
    from channels.routing import ProtocolTypeRouter, URLRouter

    from mcp_django.routing import websocket_endpoint, websocket_urlpatterns

    application = ProtocolTypeRouter({
        "http": django_asgi_app,
        "websocket": AuthMiddlewareStack(URLRouter([
            *websocket_urlpatterns,  # ws/mcp: the server endpoint
            *websocket_endpoint("ws/conformance/mcp", endpoint="conformance"),
        ])),
    })
"""

from __future__ import annotations

from django.urls import URLPattern, path

from mcp_django.endpoints import Endpoint
from mcp_django.transports.websocket import MCPWebSocketConsumer

__all__ = ["websocket_endpoint", "websocket_urlpatterns"]


def websocket_endpoint(route: str, *, endpoint: Endpoint | str) -> list[URLPattern]:
    """Return the Channels URL patterns serving an MCP endpoint over WebSocket at `route`.

    Args:
        route: the path, e.g. `"ws/mcp"` (with and without a trailing slash are both served).
        endpoint: the `Endpoint`, or the name (or path) of one the root URLconf mounts, e.g. `"server"`.
    """
    route = route.strip("/")
    consumer = MCPWebSocketConsumer.as_asgi(endpoint=endpoint)
    return [path(route, consumer), path(f"{route}/", consumer)]


websocket_urlpatterns = websocket_endpoint("ws/mcp", endpoint="server")
"""`ws/mcp`: the server endpoint (`/mcp` over HTTP) over WebSocket."""
