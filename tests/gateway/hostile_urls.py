"""A URLconf for the gateway's bound tests: one anonymous gateway per misbehaviour of the hostile backend.

Each backend is named `hostile-<mode>` (`MCP_DJANGO["SERVERS"]`); tests/gateway/test_limits.py points
them at the hostile backend it starts.
"""

from __future__ import annotations

from mcp_django.urls import endpoint
from tests.gateway.hostile_backend import MODES

urlpatterns = [
    pattern
    for mode in MODES
    for pattern in endpoint(
        f"{mode}/mcp",
        name=f"gw-{mode}",
        backend=f"hostile-{mode}",
        allow_anonymous=True,
        interceptors=[],
    )
]
