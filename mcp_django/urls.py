"""URL patterns: `path("", include("mcp_django.urls"))` serves the two default endpoints and their metadata.

- `mcp` (and `mcp/`): the **server** endpoint, every static declaration (`@mcp_django.tool`, ...);
- `mcp/adapter`: the **adapter** endpoint, every provider the apps list in `mcp_providers`;
- `mcp/.well-known/endpoints`: the JSON manifest of every mounted endpoint, its path and mode;
- the URLs of the installed apps that declare some (`mcp_urls` on their `AppConfig`): with
  `"mcp_django.gateway"`, `mcp/upstream/`, where a signed-in user connects their own account to each
  remote server whose `SERVERS` entry says `"AUTH": "oauth"` (docs/federation.md);
- `.well-known/oauth-protected-resource/<endpoint path>`: RFC 9728 metadata of each protected endpoint.
  It belongs at the site root: when you include these URLs under a prefix, also mount
  `path("", include(well_known_urlpatterns))`.

Mount more endpoints with `endpoint()`, which returns the patterns to splice in::

    from mcp_django.urls import endpoint

    urlpatterns = [
        path("", include("mcp_django.urls")),
        *endpoint("conformance/mcp", registry="myapp.mcp.registry", name="conformance", allow_anonymous=True),
        *endpoint("ops/mcp", mode="combined", name="ops", providers=["shop.products"]),
        *endpoint("tools/github/mcp", name="github", backend="github"),
        *endpoint("hub/mcp", name="hub", servers=[{"SERVER": "github", "NAMESPACE": "gh"}]),
    ]
"""

from __future__ import annotations

from typing import Unpack

from django.apps import apps
from django.urls import URLPattern, URLResolver, include, path

from mcp_django.endpoints import Endpoint, EndpointOptions
from mcp_django.transports.public import public_view
from mcp_django.transports.view import MCPView
from mcp_django.views import endpoint_manifest, protected_resource_metadata

__all__ = ["app_urlpatterns", "endpoint", "manifest_urlpatterns", "urlpatterns", "well_known_urlpatterns"]


def endpoint(route: str, **options: Unpack[EndpointOptions]) -> list[URLPattern]:
    """Return the URL patterns serving an MCP endpoint at `route`, with and without a trailing slash.

    Both spellings are served by the same view, so `APPEND_SLASH` never redirects a POST.

    Args:
        route: the path, e.g. `"conformance/mcp"` (leading and trailing slashes are ignored).
        **options: `Endpoint`'s options (`mcp_django.endpoints.EndpointOptions`), `name` required: the
            endpoint's unique name; the URL is reversible as `"mcp-<name>"`. Among them `mode`, `registry`,
            `providers`, `servers` (a hub, docs/federation.md), `backend` (a gateway, docs/gateway.md),
            `allow_anonymous`, `authentication_classes`, `sessions`, `interceptors`, `fast_path`
            (docs/fast-path.md), `overlay`, `tool_timeout`, `tool_output_max_chars`, `tool_output_overflow`,
            `extensions` (docs/extensions.md).
    """
    served = Endpoint(route, **options)
    view = MCPView.as_view(endpoint=served)
    return [path(served.path, view, name=f"mcp-{served.name}"), path(f"{served.path}/", view)]


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


def app_urlpatterns() -> list[URLResolver]:
    """The URLconfs of the installed apps that declare one as `mcp_urls` on their `AppConfig`, in their order."""
    declared = (getattr(config, "mcp_urls", None) for config in apps.get_app_configs())
    return [path("", include(urlconf)) for urlconf in declared if urlconf]


urlpatterns = [
    *endpoint("mcp", name="server", mode="server"),
    *endpoint("mcp/adapter", name="adapter", mode="adapter"),
    *manifest_urlpatterns,
    *app_urlpatterns(),
    *well_known_urlpatterns,
]
