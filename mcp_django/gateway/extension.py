"""`GatewayExtension`: what the gateway brings through the extension seam, whatever the endpoint.

It runs the `{"SERVER": ...}` entries of interceptor lists (the settings', an endpoint's, an `MCPClient`'s):
each remote interceptor server's interceptors join the chain (`remote_chain`). It serves no endpoint's
protocol itself: a remote server's tasks are its `RemoteSource`'s to answer (`gateway.tasks`), through
the tasks extension. docs/remote-interceptors.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp_django.extensions import Extension, ServerEntries
from mcp_django.gateway.remote_chain import server_entries_hook


class GatewayExtension(Extension):
    """Runs remote interceptor servers in interceptor chains; nothing is advertised, no endpoint serves it."""

    identifier = "mcp-django.dev/gateway"
    advertised = False

    def capability(self, endpoint: Any) -> Mapping[str, Any] | None:
        return None  # it adds no method, hook or source to an endpoint

    def interceptor_servers(self) -> ServerEntries:
        return server_entries_hook
