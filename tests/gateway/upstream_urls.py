"""A URLconf for the per-user credential tests: a gateway and a hub in front of the OAuth-protected upstream, and
the connect pages."""

from __future__ import annotations

from django.urls import include, path

from mcp_django.urls import endpoint

urlpatterns = [
    *endpoint("accounts/mcp", name="gw-accounts", backend="accounts", interceptors=[]),
    *endpoint(
        "accounts/hub/mcp",
        name="gw-accounts-hub",
        registry="tests.interceptors.tools.registry",
        interceptors=[],
        servers=[{"SERVER": "accounts", "NAMESPACE": "acc"}],
    ),
    path("", include("mcp_django.gateway.urls")),
]
