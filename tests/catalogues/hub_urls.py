"""A hub in `search` and in `grouped` mode: the registry `local` of `tests.catalogues.test_hub` and the remote
`weather` (the `SERVERS` entry that module's fixture adds) under the namespace `wx`."""

from __future__ import annotations

from mcp_django.catalogues import CatalogueExtension
from mcp_django.urls import endpoint

urlpatterns = [
    pattern
    for mode in ("search", "grouped")
    for pattern in endpoint(
        f"hub/{mode}/mcp",
        name=f"hub-{mode}",
        registry="tests.catalogues.test_hub.local",
        allow_anonymous=True,
        interceptors=[],
        servers=[{"SERVER": "weather", "NAMESPACE": "wx"}],
        extensions=[CatalogueExtension(mode)],
    )
]
