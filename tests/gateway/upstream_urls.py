"""A URLconf for the per-user credential tests: a gateway to the OAuth-protected upstream, and the connect pages."""

from __future__ import annotations

from mcp_django.urls import endpoint, upstream_urlpatterns

urlpatterns = [
    *endpoint("accounts/mcp", mode="gateway", name="gw-accounts", backend="accounts", interceptors=[]),
    *upstream_urlpatterns,
]
