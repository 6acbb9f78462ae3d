"""`GatewayExtension`: what the gateway brings through the extension seam.

- The remote servers an endpoint names, as its sources (`server_sources()`): a gateway's `backend=` (one
  remote, no local source: it mirrors the remote's server info and instructions) or a hub's `servers=`
  (after its local sources, each under a namespace). The endpoint keeps them, prepares them when it
  admits a caller (`Source.prepare`), and has them forget what they learned when it is reset. On such
  an endpoint it is served (not advertised): `tools/list` results leave with a valid `inputSchema` on
  every tool (`SchemaRepairHook`), and the remotes' list-changed and resource-updated notifications
  reach the endpoint's listening clients.
- The `{"SERVER": ...}` entries of interceptor lists (the settings', an endpoint's, an `MCPClient`'s):
  each remote interceptor server's interceptors join the chain (`remote_chain`).

A remote server's tasks are its `RemoteSource`'s to answer (`gateway.tasks`), through the tasks
extension. docs/gateway.md, docs/federation.md, docs/remote-interceptors.md.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping, Sequence
from typing import Any, Final

from mcp_django.client.config import ServerConfig
from mcp_django.endpoints import Endpoint
from mcp_django.extensions import Extension, ServerEntries
from mcp_django.gateway.forwarding import ensure_input_schemas
from mcp_django.gateway.remote_chain import server_entries_hook
from mcp_django.gateway.source import RemoteSource
from mcp_django.protocol.context import RequestContext
from mcp_django.protocol.hooks import CallNext, OperationHook
from mcp_django.runtime import notifications
from mcp_django.scopes import Scope
from mcp_django.sources import Source

IDENTIFIER: Final = "mcp-django.dev/gateway"
FORWARDED_NOTIFICATIONS: Final = frozenset(
    {
        "notifications/tools/list_changed",
        "notifications/prompts/list_changed",
        "notifications/resources/list_changed",
        "notifications/resources/updated",
    }
)
"""The remote servers' notifications an endpoint passes on to its own listening clients."""
SERVER_ENTRY_KEYS: Final = frozenset({"SERVER", "NAMESPACE", "SCOPE", "TOOL_SCOPES", "TOOLS"})
"""The keys of one `servers=` entry."""


class GatewayExtension(Extension):
    """Serves the remote servers an endpoint names, and runs remote interceptor servers in interceptor chains."""

    identifier = IDENTIFIER
    advertised = False

    def capability(self, endpoint: Any) -> Mapping[str, Any] | None:
        """Served (not advertised) where the endpoint names remote servers; elsewhere it adds nothing."""
        return {} if isinstance(endpoint, Endpoint) and endpoint.servers else None

    def server_sources(self, endpoint: Any) -> Sequence[Source]:
        return [_source(endpoint, entry, is_hub(endpoint)) for entry in endpoint.servers]

    def hooks(self, endpoint: Any) -> Sequence[OperationHook]:
        return [SchemaRepairHook()]

    def interceptor_servers(self) -> ServerEntries:
        return server_entries_hook


def is_hub(endpoint: Endpoint) -> bool:
    """True when the endpoint composes more than one source: a remote that is down then drops out of lists.

    A gateway (one remote server, no local source) is not: it answers as its remote would, and mirrors it.
    """
    return endpoint.local_mode is not None or len(endpoint.servers) > 1


def remote_sources(endpoint: Endpoint) -> list[RemoteSource]:
    """The endpoint's remote sources (those of its `servers`), as it keeps them."""
    return [source for source in endpoint.remote_sources if isinstance(source, RemoteSource)]


def entry_problems(entry: Any) -> list[str]:
    """What is wrong with one `servers=` entry, in words a system check can show (empty if fine)."""
    if isinstance(entry, str):
        return [] if entry else ["an empty server name"]
    if not isinstance(entry, Mapping) or "SERVER" not in entry:
        return ["must be a server name or a dict with SERVER"]
    problems = [f"unknown key {key!r}" for key in entry if key not in SERVER_ENTRY_KEYS]
    try:
        Scope.parse(entry.get("SCOPE", Scope.USER))
        for value in dict(entry.get("TOOL_SCOPES") or {}).values():
            Scope.parse(value)
    except (ValueError, TypeError, KeyError):
        problems.append("SCOPE and TOOL_SCOPES take USER, TEAM or SYSTEM")
    tools = entry.get("TOOLS")
    if tools is not None and not (isinstance(tools, (list, tuple)) and all(isinstance(t, str) for t in tools)):
        problems.append("TOOLS must be a list of name patterns")
    return problems


def _source(endpoint: Endpoint, entry: Any, tolerates_down: bool) -> RemoteSource:
    if isinstance(entry, str):
        entry = {"SERVER": entry, "NAMESPACE": entry}
    spec = entry["SERVER"]
    label = spec if isinstance(spec, str) else spec.name if isinstance(spec, ServerConfig) else ""
    label = label or f"gateway {endpoint.name}"
    namespace = entry.get("NAMESPACE", label if isinstance(spec, str) else "")
    source = RemoteSource(
        spec,
        namespace=namespace if isinstance(namespace, str) else "",
        scope=entry.get("SCOPE", Scope.USER),
        tool_scopes=entry.get("TOOL_SCOPES"),
        tools=entry.get("TOOLS"),
        tolerates_down=tolerates_down,
        name=label,
    )
    source.on_notification = _Forwarder(endpoint)
    return source


class _Forwarder:
    """Passes a remote's notifications on to the endpoint's listening clients (holding the endpoint weakly)."""

    __slots__ = ("endpoint",)

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = weakref.ref(endpoint)

    async def __call__(self, method: str, params: dict[str, Any] | None) -> None:
        endpoint = self.endpoint()
        if endpoint is not None and method in FORWARDED_NOTIFICATIONS:
            await notifications.send_notification(endpoint, method, params)


class SchemaRepairHook:
    """On an endpoint with remote servers: `tools/list` results leave with a valid `inputSchema` on every tool
    (an interceptor may strip a schema)."""

    __slots__ = ()

    async def __call__(
        self, method: str, params: dict[str, Any], ctx: RequestContext, call_next: CallNext
    ) -> dict[str, Any]:
        result = await call_next(params)
        return ensure_input_schemas(result) if method == "tools/list" else result
