"""A URLconf for the tests of remotes that misbehave (tests/gateway/test_hub_faults.py).

The servers are named (`MCP_DJANGO["SERVERS"]`): the test module points them at the servers it starts.
"""

from __future__ import annotations

from mcp_django.urls import endpoint

urlpatterns = [
    # A hub of two remotes: `good` answers, `bad` misbehaves as the test makes it.
    *endpoint(
        "faults/mcp",
        mode=None,  # remote servers only
        name="gw-faults",
        allow_anonymous=True,
        interceptors=[],
        servers=[{"SERVER": "good", "NAMESPACE": "good"}, {"SERVER": "bad", "NAMESPACE": "bad"}],
    ),
    # A gateway in front of a server the test restarts.
    *endpoint("restarted/mcp", name="gw-restarted", backend="restarted", allow_anonymous=True, interceptors=[]),
]
