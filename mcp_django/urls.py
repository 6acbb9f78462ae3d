"""URL patterns: `path("", include("mcp_django.urls"))` serves the server endpoint at `mcp`.

Mount more endpoints with `endpoint()`, which returns the patterns to splice in::

    from mcp_django.urls import endpoint

    urlpatterns = [
        path("", include("mcp_django.urls")),
        *endpoint("conformance/mcp", registry="myapp.mcp.registry", name="conformance", allow_anonymous=True),
    ]
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.urls import URLPattern, path

from mcp_django.endpoints import Endpoint
from mcp_django.transports.http import MCPView

if TYPE_CHECKING:
    from mcp_django.registry import Registry

__all__ = ["endpoint", "urlpatterns"]


def endpoint(
    route: str,
    *,
    registry: Registry | str,
    name: str,
    allow_anonymous: bool = False,
    sessions: bool | None = None,
    interceptors: list[Any] | None = None,
    interceptor_protocol: bool = False,
) -> list[URLPattern]:
    """Return the URL patterns serving an MCP endpoint at `route`, with and without a trailing slash.

    Both spellings are served by the same view, so `APPEND_SLASH` never redirects a POST.

    Args:
        route: the path, e.g. `"conformance/mcp"` (leading and trailing slashes are ignored).
        registry: the `Registry` to serve, or a dotted path to one.
        name: the endpoint's unique name; the URL is reversible as `"mcp-<name>"`.
        allow_anonymous: whether callers without a Django user may use it (enforced once authentication arrives).
        sessions: open handshake-era sessions; None follows `MCP_DJANGO["SESSIONS"]`.
        interceptors: the endpoint's own interceptor list; None follows `MCP_DJANGO["INTERCEPTORS"]`.
        interceptor_protocol: also serve `interceptors/list` and `interceptor/invoke` (SEP-2624).
    """
    served = Endpoint(
        route,
        registry=registry,
        name=name,
        allow_anonymous=allow_anonymous,
        sessions=sessions,
        interceptors=interceptors,
        interceptor_protocol=interceptor_protocol,
    )
    view = MCPView.as_view(endpoint=served)
    return [path(served.path, view, name=f"mcp-{name}"), path(f"{served.path}/", view)]


urlpatterns = endpoint("mcp", registry="mcp_django.default_registry", name="server")
