"""The example project's URLconf with the hub of tests/gateway/test_reference_servers_live.py
(`tests.gateway.reference_settings`): the reference server over stdio and HTTP, one that errs, one that hangs."""

from __future__ import annotations

from example_project.urls import urlpatterns as example_urlpatterns
from mcp_django.urls import endpoint

urlpatterns = [
    *endpoint(
        "reference/mcp",
        name="reference-hub",
        mode=None,  # remote servers only
        allow_anonymous=True,
        interceptors=[],
        servers=[
            {"SERVER": "everything", "NAMESPACE": "ev"},
            {"SERVER": "everything-http", "NAMESPACE": "evh"},
            {"SERVER": "erring", "NAMESPACE": "err"},
            {"SERVER": "hanging", "NAMESPACE": "hang"},
        ],
    ),
    *example_urlpatterns,
]
