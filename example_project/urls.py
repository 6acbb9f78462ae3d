"""URLs of the example project: the admin, the default MCP endpoint and the conformance fixture."""

from django.contrib import admin
from django.urls import include, path

from mcp_django.urls import endpoint

urlpatterns = [
    path("admin/", admin.site.urls),
    # The conformance fixture server, open to anonymous callers as the official suite expects.
    *endpoint(
        "conformance/mcp",
        registry="example_project.conformance.mcp.registry",
        name="conformance",
        allow_anonymous=True,
        interceptors=[],
    ),
    # The same fixture served by the Django view and the project's middleware, not the fast path
    # (example_project/asgi.py): the conformance tests run against both.
    *endpoint(
        "conformance/view/mcp",
        registry="example_project.conformance.mcp.registry",
        name="conformance-view",
        allow_anonymous=True,
        interceptors=[],
        fast_path=False,
    ),
    # /mcp (and /mcp/): the server endpoint with every `@mcp_django.tool` of the project's apps.
    path("", include("mcp_django.urls")),
    # The OAuth 2.1 authorization server: metadata, registration, login + consent, tokens (docs/oauth.md).
    path("", include("mcp_django.oauth.urls")),
]
