"""URL patterns: `path("", include("mcp_django.urls"))` serves the two default endpoints and their metadata.

- `mcp` (and `mcp/`): the **server** endpoint, every static declaration (`@mcp_django.tool`, ...);
- `mcp/adapter`: the **adapter** endpoint, every provider the apps list in `mcp_providers`;
- `mcp/.well-known/endpoints`: the JSON manifest of every mounted endpoint, its path and mode;
- `mcp/upstream/`: where a signed-in user connects their own account to each remote server whose
  `SERVERS` entry says `"AUTH": "oauth"` (docs/federation.md);
- `.well-known/oauth-protected-resource/<endpoint path>`: RFC 9728 metadata of each protected endpoint.
  It belongs at the site root: when you include these URLs under a prefix, also mount
  `path("", include(well_known_urlpatterns))`.

Mount more endpoints with `endpoint()`, which returns the patterns to splice in::

    from mcp_django.urls import endpoint

    urlpatterns = [
        path("", include("mcp_django.urls")),
        *endpoint("conformance/mcp", registry="myapp.mcp.registry", name="conformance", allow_anonymous=True),
        *endpoint("ops/mcp", mode="combined", name="ops", providers=["shop.products"]),
        *endpoint("tools/github/mcp", mode="gateway", name="github", backend="github"),
        *endpoint("hub/mcp", name="hub", servers=[{"SERVER": "github", "NAMESPACE": "gh"}]),
    ]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from django.urls import URLPattern, path

from mcp_django.endpoints import Endpoint, Mode
from mcp_django.gateway import upstream_views
from mcp_django.gateway.endpoint import GatewayEndpoint
from mcp_django.transports.public import public_view
from mcp_django.transports.view import MCPView
from mcp_django.views import endpoint_manifest, protected_resource_metadata

if TYPE_CHECKING:
    from mcp_django.extensions import Extension
    from mcp_django.providers import Provider
    from mcp_django.registry import Registry

__all__ = ["endpoint", "manifest_urlpatterns", "upstream_urlpatterns", "urlpatterns", "well_known_urlpatterns"]


def endpoint(
    route: str,
    *,
    name: str,
    mode: Mode = "server",
    registry: Registry | str | None = None,
    providers: Sequence[str | Provider | type[Provider]] | None = None,
    allow_anonymous: bool = False,
    authentication_classes: Sequence[type | str] | None = None,
    sessions: bool | None = None,
    interceptors: Sequence[str | Mapping[str, Any]] | None = None,
    fast_path: bool = True,
    tool_timeout: float | None = None,
    extensions: Sequence[Extension | type[Extension] | str] | None = None,
    exclude_extensions: Sequence[str] = (),
    **gateway: Any,
) -> list[URLPattern]:
    """Return the URL patterns serving an MCP endpoint at `route`, with and without a trailing slash.

    Both spellings are served by the same view, so `APPEND_SLASH` never redirects a POST.

    Args:
        route: the path, e.g. `"conformance/mcp"` (leading and trailing slashes are ignored).
        name: the endpoint's unique name; the URL is reversible as `"mcp-<name>"`.
        mode: `"server"` (a registry of static declarations), `"adapter"` (providers) or
            `"combined"` (both; a static declaration wins over a provider's item of the same name).
        registry: the `Registry` to serve, or a dotted path to one; default `mcp_django.default_registry`.
        providers: the providers to serve (ids, or provider classes or instances); None serves every provider.
        allow_anonymous: whether callers without credentials may use it (with the USER scope).
        authentication_classes: DRF authentication classes for this endpoint; None follows
            `MCP_DJANGO["DEFAULT_AUTHENTICATION_CLASSES"]`.
        sessions: open handshake-era sessions; None follows `MCP_DJANGO["SESSIONS"]`.
        interceptors: the endpoint's own interceptor list; None follows `MCP_DJANGO["INTERCEPTORS"]`.
        fast_path: served by `mcp_django.asgi.get_asgi_application()` without Django's request cycle
            (the default); False keeps it on the Django view and the project's middleware (docs/fast-path.md).
            Under WSGI the view serves every endpoint either way.
        tool_timeout: seconds a tool call may run on this endpoint (a tool's own `timeout` wins);
            None follows `MCP_DJANGO["TOOL_TIMEOUT"]`.
        extensions: protocol extensions offered here besides the installed ones (docs/extensions.md).
        exclude_extensions: identifiers of installed extensions not offered here.
        **gateway: the `GatewayEndpoint` arguments: with `mode="gateway"`, `backend` (required),
            `server_info`, `instructions`, `scope`, `tool_scopes` (docs/gateway.md); with any mode,
            `servers` makes a hub: remote servers beside the mode's local sources (docs/federation.md).
    """
    common: dict[str, Any] = {
        "allow_anonymous": allow_anonymous,
        "authentication_classes": authentication_classes,
        "sessions": sessions,
        "interceptors": interceptors,
        "fast_path": fast_path,
        "tool_timeout": tool_timeout,
        "extensions": extensions,
        "exclude_extensions": exclude_extensions,
    }
    served: Endpoint
    if mode == "gateway" and (registry is not None or providers is not None):
        raise ValueError(f"Endpoint {name!r}: a gateway serves its backend, not a registry or providers")
    if mode == "gateway" or "servers" in gateway:
        local: dict[str, Any] = {"registry": registry, "providers": providers} if mode != "gateway" else {}
        served = GatewayEndpoint(route, name=name, mode=mode, **local, **gateway, **common)
    elif gateway:
        raise TypeError(f"Endpoint {name!r}: {', '.join(sorted(gateway))} only apply to mode='gateway' or servers=")
    else:
        served = Endpoint(route, name=name, mode=mode, registry=registry, providers=providers, **common)
    view = MCPView.as_view(endpoint=served)
    return [path(served.path, view, name=f"mcp-{name}"), path(f"{served.path}/", view)]


well_known_urlpatterns = [
    path(
        ".well-known/oauth-protected-resource",
        public_view(protected_resource_metadata),
        name="mcp-protected-resource-root",
    ),
    path(
        ".well-known/oauth-protected-resource/<path:resource>",
        public_view(protected_resource_metadata),
        name="mcp-protected-resource",
    ),
]
"""RFC 9728 metadata of every protected endpoint; serve these at the site root."""

manifest_urlpatterns = [path("mcp/.well-known/endpoints", public_view(endpoint_manifest), name="mcp-manifest")]
"""The endpoints manifest (every mounted endpoint, its mode and sources) at `/mcp/.well-known/endpoints`."""
upstream_urlpatterns = [
    path("mcp/upstream/", public_view(upstream_views.connections), name="mcp-upstream"),
    path("mcp/upstream/<str:server>/connect", public_view(upstream_views.connect), name="mcp-upstream-connect"),
    path("mcp/upstream/<str:server>/callback", public_view(upstream_views.callback), name="mcp-upstream-callback"),
    path(
        "mcp/upstream/<str:server>/disconnect",
        public_view(upstream_views.disconnect),
        name="mcp-upstream-disconnect",
    ),
]
"""Where signed-in users connect their own accounts to the `"AUTH": "oauth"` servers (docs/federation.md).

Public views: a body from anyone is bounded by `MAX_PUBLIC_REQUEST_BYTES` before Django reads it."""

urlpatterns = [
    *endpoint("mcp", name="server", mode="server"),
    *endpoint("mcp/adapter", name="adapter", mode="adapter"),
    *manifest_urlpatterns,
    *upstream_urlpatterns,
    *well_known_urlpatterns,
]
