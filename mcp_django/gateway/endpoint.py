"""Gateways and hubs: endpoints whose sources include remote MCP servers (`RemoteSource`).

::

    urlpatterns = [
        # a gateway: one remote server, looking to its callers like that server
        *endpoint("tools/github/mcp", name="github", mode="gateway", backend="github"),
        # a hub: the local registry and two remote servers, each under a namespace
        *endpoint("hub/mcp", name="hub", mode="server", servers=[
            {"SERVER": "github", "NAMESPACE": "gh", "SCOPE": "TEAM"},
            {"SERVER": "docs", "NAMESPACE": "docs", "TOOLS": ["search*"]},
        ]),
    ]

Admission, authentication, scopes, the admin's switches, the interceptor chain and the audit trail
apply as on any endpoint; `CompositeBackend` serves the local sources first, then each remote one.
A gateway (one remote without a namespace, no local source) mirrors the remote's server info,
instructions and features (read when the first caller is admitted, and again whenever the remote's
answer changes), unless `server_info` or `instructions` override them; a hub serves its own. The
remotes' list-changed and resource-updated notifications reach this endpoint's listening clients.
docs/gateway.md, docs/federation.md.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from typing import Any, Final

from mcp_django import notifications
from mcp_django.admission import Admission, Credentials
from mcp_django.client.connection import RemoteServer
from mcp_django.conf import mcp_settings
from mcp_django.endpoints import SOURCELESS, Endpoint, Mode
from mcp_django.gateway.forwarding import ensure_input_schemas
from mcp_django.gateway.source import RemoteSource
from mcp_django.protocol.context import RequestContext
from mcp_django.protocol.hooks import CallNext, OperationHook
from mcp_django.scopes import Scope
from mcp_django.sources import Source

logger = logging.getLogger("mcp_django.gateway")

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

ServerEntry = str | Mapping[str, Any]


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


class GatewayEndpoint(Endpoint):
    """An endpoint whose sources include remote MCP servers: a gateway (one remote) or a hub (many, and local ones).

    Args:
        path: the URL path, as for `Endpoint`.
        name: the endpoint's unique name.
        mode: `"gateway"` serves the remote servers only; `"server"`, `"adapter"` or `"combined"` serve
            the local sources of that mode first, then the remote ones (a hub).
        backend: a gateway's one remote server: the name of an `MCP_DJANGO["SERVERS"]` entry, a dict
            shaped like one (`{"URL": ...}` or `{"COMMAND": [...]}`), or a `RemoteServer`. Served
            without a namespace, with `scope` and `tool_scopes`.
        servers: a hub's remote servers, in order of precedence: each a `SERVERS` name (its namespace
            is the name) or `{"SERVER": name, "NAMESPACE": "gh", "SCOPE": "TEAM", "TOOL_SCOPES":
            {"pattern": scope}, "TOOLS": ["pattern", ...]}` ("" as `NAMESPACE`: names unchanged).
        server_info: the `Implementation` callers see; None mirrors a gateway's remote (a hub's: the settings').
        instructions: the instructions callers see; None mirrors a gateway's remote.
        scope: with `backend`, the least scope a caller needs to see anything of it (default USER).
        tool_scopes: with `backend`, `{"pattern": scope}`: remote tools whose name matches a pattern
            (`fnmatch`, the first match wins) need at least that scope.
        **options: the other `Endpoint` arguments (`registry`, `providers`, `allow_anonymous`,
            `authentication_classes`, `sessions`, `interceptors`, `extensions`, `fast_path`, ...).
    """

    def __init__(
        self,
        path: str,
        *,
        name: str,
        mode: Mode = SOURCELESS,
        backend: str | Mapping[str, Any] | RemoteServer | None = None,
        servers: Sequence[ServerEntry] | None = None,
        server_info: Mapping[str, Any] | None = None,
        instructions: str | None = None,
        scope: Scope | str = Scope.USER,
        tool_scopes: Mapping[str, Scope | str] | None = None,
        **options: Any,
    ) -> None:
        if (backend is None) == (servers is None):
            raise ValueError(f"Endpoint {name!r}: give a gateway's backend= or a hub's servers=, not both")
        if mode == SOURCELESS and (options.get("registry") is not None or options.get("providers") is not None):
            raise ValueError(f"Endpoint {name!r}: mode 'gateway' serves remote servers only; a hub names its mode")
        super().__init__(path, name=name, mode=mode, **options)
        self.server_info_override = dict(server_info) if server_info is not None else None
        self.instructions_override = instructions
        entries: list[ServerEntry | RemoteServer]
        if backend is not None:
            entries = [{"SERVER": backend, "NAMESPACE": "", "SCOPE": scope, "TOOL_SCOPES": dict(tool_scopes or {})}]
        else:
            entries = list(servers or ())
        self.server_entries = tuple(entries)
        self.remote_sources = tuple(self._source(entry) for entry in entries)

    def _source(self, entry: Any) -> RemoteSource:
        if isinstance(entry, str):
            entry = {"SERVER": entry, "NAMESPACE": entry}
        spec = entry["SERVER"]
        label = (
            spec if isinstance(spec, str) else spec.name if isinstance(spec, RemoteServer) else f"gateway {self.name}"
        )
        namespace = entry.get("NAMESPACE", label if isinstance(spec, str) else "")
        source = RemoteSource(
            spec,
            namespace=namespace if isinstance(namespace, str) else "",
            scope=entry.get("SCOPE", Scope.USER),
            tool_scopes=entry.get("TOOL_SCOPES"),
            tools=entry.get("TOOLS"),
            tolerates_down=self.is_hub,
            name=label,
        )
        source.on_notification = self._forward_notification
        return source

    @property
    def is_hub(self) -> bool:
        """True when the endpoint composes more than one source (a remote that is down then drops out)."""
        entries = len(self.server_entries) if hasattr(self, "server_entries") else 0
        return self.mode != SOURCELESS or entries > 1

    def server_specs(self) -> list[Any]:
        """What each remote source names (a `SERVERS` name, a dict or a `RemoteServer`), for the checks."""
        return [source.spec for source in self.remote_sources]

    def sources(self) -> list[Source]:
        """The local sources of the mode, then the remote servers, in the order given."""
        return [*super().sources(), *self.remote_sources]

    async def admit(
        self,
        *,
        host: str | None,
        origin: str | None,
        credentials: Credentials,
        resource_metadata: str | None = None,
    ) -> Admission:
        """Admit the caller as any endpoint does, then make sure the remote servers are described (`prepare`)."""
        admission = await super().admit(
            host=host, origin=origin, credentials=credentials, resource_metadata=resource_metadata
        )
        await self.prepare()
        return admission

    async def prepare(self) -> None:
        """Open the connections to the remote servers (in parallel) and mirror what they say about themselves.

        A remote server that is down is not an admission failure: the caller is served, and the
        remote's operations answer "backend unavailable" (a hub leaves it out of lists) until it is back.
        """
        before = [source.description() for source in self.remote_sources]
        await asyncio.gather(*(source.prepare() for source in self.remote_sources))
        if [source.description() for source in self.remote_sources] != before:
            self._handler = None
            self._served = None  # what the remotes advertise decides which extensions apply (`gateway.tasks`)

    async def _forward_notification(self, method: str, params: dict[str, Any] | None) -> None:
        if method in FORWARDED_NOTIFICATIONS:
            await notifications.send_notification(self, method, params)

    def describe(self) -> tuple[Mapping[str, Any], str | None]:
        """The server info and instructions callers see: the overrides, else a gateway's remote's, else settings'."""
        mirrored = self.remote_sources[0].description() if not self.is_hub else None
        server_info = (
            self.server_info_override or (mirrored.server_info if mirrored else None) or mcp_settings.SERVER_INFO
        )
        instructions = self.instructions_override or (mirrored.instructions if mirrored else None)
        if self.is_hub and instructions is None:
            instructions = mcp_settings.INSTRUCTIONS
        return server_info, instructions

    def reset(self) -> None:
        """Also forget the resolved servers (their settings may have changed) and what they said about themselves."""
        super().reset()
        for source in getattr(self, "remote_sources", ()):
            source.forget()

    def hooks(self) -> list[OperationHook]:
        """The endpoint's hooks, inside a repair of `tools/list` results (an interceptor may strip a schema)."""
        return [SchemaRepairHook(), *super().hooks()]


class SchemaRepairHook:
    """Outermost on a gateway: `tools/list` results leave with a valid `inputSchema` on every tool."""

    __slots__ = ()

    async def __call__(
        self, method: str, params: dict[str, Any], ctx: RequestContext, call_next: CallNext
    ) -> dict[str, Any]:
        result = await call_next(params)
        return ensure_input_schemas(result) if method == "tools/list" else result
