"""A URLconf for the in-process gateway tests: gateways in front of the official SDK's server and a stdio one.

The backends are named (`MCP_DJANGO["SERVERS"]`), so each test module points them at the servers it starts.
"""

from __future__ import annotations

from mcp_django.urls import endpoint

urlpatterns = [
    # Redaction rewrites the arguments on the way in; the audit sink records every call passing through.
    *endpoint(
        "sdk/mcp",
        name="gw-sdk",
        backend="sdk",
        tool_scopes={"slow": "SYSTEM"},
        interceptors=[
            "mcp_django.interceptors.redaction.RedactionInterceptor",
            "mcp_django.interceptors.audit.AuditSinkInterceptor",
        ],
    ),
    *endpoint(
        "sdk/front/mcp",
        name="gw-front",
        backend="sdk",
        server_info={"name": "front-door", "version": "1.0"},
        instructions="Ask the front door.",
        interceptors=[],
    ),
    *endpoint("team/mcp", name="gw-team", backend="sdk", scope="TEAM", interceptors=[]),
    *endpoint("stdio/mcp", name="gw-stdio", backend="stdio", allow_anonymous=True, interceptors=[]),
    *endpoint(
        "down/mcp",
        name="gw-down",
        backend={"URL": "http://127.0.0.1:9/mcp", "CONNECT_TIMEOUT": 3},
        allow_anonymous=True,
        interceptors=[],
    ),
    # A hub: the local registry first, then two remotes under namespaces, then one nothing answers for.
    *endpoint(
        "hub/mcp",
        name="gw-hub",
        registry="tests.interceptors.tools.registry",
        allow_anonymous=True,
        interceptors=[],
        servers=[
            {"SERVER": "sdk", "NAMESPACE": "sdk", "TOOL_SCOPES": {"slow": "SYSTEM"}},
            {"SERVER": "stdio", "NAMESPACE": "io", "TOOLS": ["echo", "announce", "log", "roots"]},
            {"SERVER": {"URL": "http://127.0.0.1:9/mcp", "CONNECT_TIMEOUT": 3}, "NAMESPACE": "down"},
        ],
    ),
]
