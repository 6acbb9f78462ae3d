"""The gateway app's pages, where signed-in users connect their own accounts to the `"AUTH": "oauth"` servers.

`include("mcp_django.urls")` mounts them while `"mcp_django.gateway"` is installed (`GatewayConfig.mcp_urls`);
a project that mounts the package's URLs piecemeal adds `path("", include("mcp_django.gateway.urls"))`.
The URL names (`mcp-upstream`, ...) are global, as the endpoints' are. docs/federation.md.
"""

from __future__ import annotations

from django.urls import path

from mcp_django.gateway import upstream_views
from mcp_django.transports.public import public_view

urlpatterns = [
    path("mcp/upstream/", public_view(upstream_views.connections), name="mcp-upstream"),
    path("mcp/upstream/<str:server>/connect", public_view(upstream_views.connect), name="mcp-upstream-connect"),
    path("mcp/upstream/<str:server>/callback", public_view(upstream_views.callback), name="mcp-upstream-callback"),
    path(
        "mcp/upstream/<str:server>/disconnect",
        public_view(upstream_views.disconnect),
        name="mcp-upstream-disconnect",
    ),
]
"""Public views: a body from anyone is bounded by `MAX_PUBLIC_REQUEST_BYTES` before Django reads it."""
