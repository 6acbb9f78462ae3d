"""`mode="gateway"`: an endpoint that fronts a remote MCP server, looking to its callers like that server.

::

    urlpatterns = [
        *endpoint("tools/github/mcp", name="github", mode="gateway", backend="github"),
    ]

Admission, authentication, scopes, the admin's switches, the interceptor chain and the audit trail
apply as on any endpoint; then each operation goes to the remote server (`GatewayBackend`). The
endpoint mirrors the remote's server info, instructions and capabilities (read when the first
caller is admitted, and again whenever the remote's answer changes), unless `server_info` or
`instructions` override them. The remote's list-changed and resource-updated notifications are
forwarded to this endpoint's listening clients. docs/gateway.md.
"""

from __future__ import annotations

import logging
import weakref
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, Final

from mcp_django import notifications
from mcp_django.admission import Admission, Credentials
from mcp_django.conf import mcp_settings
from mcp_django.endpoints import Endpoint
from mcp_django.gateway.backend import FEATURES, GatewayBackend, ensure_input_schemas
from mcp_django.gateway.connection import (
    BackendUnavailable,
    RemoteConnection,
    RemoteError,
    RemoteServer,
    connect,
    remote_server,
)
from mcp_django.protocol.backend import Backend
from mcp_django.protocol.context import RequestContext
from mcp_django.protocol.hooks import CallNext, OperationHook
from mcp_django.protocol.jsonrpc import Message
from mcp_django.providers import Provider
from mcp_django.scopes import Scope, ScopeResolver

__all__ = ["FORWARDED_NOTIFICATIONS", "GatewayEndpoint", "SchemaRepairHook"]

logger = logging.getLogger("mcp_django.gateway")

FORWARDED_NOTIFICATIONS: Final = frozenset(
    {
        "notifications/tools/list_changed",
        "notifications/prompts/list_changed",
        "notifications/resources/list_changed",
        "notifications/resources/updated",
    }
)
"""The remote server's notifications a gateway passes on to its own listening clients."""


class GatewayEndpoint(Endpoint):
    """An endpoint whose tools, resources, prompts and completions are a remote MCP server's.

    Args:
        path: the URL path, as for `Endpoint`.
        name: the endpoint's unique name.
        backend: the remote server: the name of an `MCP_DJANGO["GATEWAYS"]` entry, a dict shaped
            like one (`{"URL": ...}` or `{"COMMAND": [...]}`), or a `RemoteServer`.
        server_info: the `Implementation` callers see; None mirrors the remote's.
        instructions: the instructions callers see; None mirrors the remote's.
        scope: the least scope a caller needs to see anything here (default USER: every admitted caller).
        tool_scopes: `{"pattern": scope}` — remote tools whose name matches a pattern (`fnmatch`, the
            first match wins) need at least that scope; others need `scope`.
        **options: the other `Endpoint` arguments (`allow_anonymous`, `authentication_classes`,
            `sessions`, `interceptors`, `interceptor_protocol`, `fast_path`, `overlay`).
    """

    def __init__(
        self,
        path: str,
        *,
        name: str,
        backend: str | Mapping[str, Any] | RemoteServer,
        server_info: Mapping[str, Any] | None = None,
        instructions: str | None = None,
        scope: Scope | str = Scope.USER,
        tool_scopes: Mapping[str, Scope | str] | None = None,
        **options: Any,
    ) -> None:
        super().__init__(path, name=name, mode="server", **options)
        self.mode = "gateway"
        self.backend_spec = backend
        self.server_info_override = dict(server_info) if server_info is not None else None
        self.instructions_override = instructions
        self.scope = Scope.parse(scope)
        self.tool_scopes = tuple((pattern, Scope.parse(value)) for pattern, value in (tool_scopes or {}).items())
        self._remote: RemoteServer | None = None
        self._described: tuple[Any, ...] | None = None
        self._listened: weakref.WeakSet[RemoteConnection] = weakref.WeakSet()
        self._param_headers: OrderedDict[str, tuple[dict[str, str], Scope]] = OrderedDict()

    @property
    def registry(self) -> None:
        """A gateway serves no registry of its own."""
        return None

    @property
    def providers(self) -> tuple[Provider, ...]:
        """A gateway serves no providers of its own."""
        return ()

    @property
    def remote(self) -> RemoteServer:
        """The remote server, resolved from `backend` on first use (named after the entry, else the endpoint).

        Raises:
            LookupError, ValueError: see `connection.remote_server` (system check `mcp_django.E030`).
        """
        if self._remote is None:
            label = self.backend_spec if isinstance(self.backend_spec, str) else f"gateway {self.name}"
            self._remote = remote_server(self.backend_spec, name=label)
        return self._remote

    @property
    def connection_to_remote(self) -> RemoteConnection:
        """The pooled connection to the remote server on the running event loop."""
        return connect(self.remote)

    async def admit(
        self,
        *,
        host: str | None,
        origin: str | None,
        credentials: Credentials,
        resource_metadata: str | None = None,
    ) -> Admission:
        """Admit the caller as any endpoint does, then make sure the remote server is described (`prepare`)."""
        admission = await super().admit(
            host=host, origin=origin, credentials=credentials, resource_metadata=resource_metadata
        )
        await self.prepare()
        return admission

    async def prepare(self) -> None:
        """Open the connection to the remote server and mirror what it says about itself.

        A remote server that is down is not an admission failure: the caller is served, and each
        forwarded operation answers "backend unavailable" until it is back.
        """
        connection = self.connection_to_remote
        if connection not in self._listened:
            self._listened.add(connection)
            connection.add_listener(self._forward_notification)
        try:
            await connection.open()
        except (BackendUnavailable, RemoteError) as error:
            logger.warning("Gateway %r cannot reach its backend: %s", self.name, error)
            return
        described = (
            connection.protocol_version,
            sorted(name for name in FEATURES if name in connection.capabilities),
            connection.server_info,
            connection.instructions,
        )
        if described != self._described:
            self._described = described
            self._handler = None

    async def _forward_notification(self, message: Message) -> None:
        method = message.get("method")
        if method in FORWARDED_NOTIFICATIONS:
            params = message.get("params")
            await notifications.send_notification(self, str(method), params if isinstance(params, dict) else None)

    def describe(self) -> tuple[Mapping[str, Any], str | None]:
        """The server info and instructions callers see: the overrides, else the remote's, else the settings'."""
        mirrored_info = self._described[2] if self._described and self._described[2] else None
        mirrored_instructions = self._described[3] if self._described else None
        server_info = self.server_info_override or mirrored_info or mcp_settings.SERVER_INFO
        return server_info, self.instructions_override or mirrored_instructions

    def build_backend(self, scopes: ScopeResolver | None = None) -> Backend:
        """A `GatewayBackend` mirroring the remote's features (all of them until it has been reached)."""
        features = self._described[1] if self._described else FEATURES
        return GatewayBackend(
            self.remote,
            {feature: {} for feature in features},
            scopes or self.resolve_scope,
            scope=self.scope,
            tool_scopes=self.tool_scopes,
            param_headers=self._param_headers,
        )

    def tool_param_headers(self, tool_name: str) -> tuple[Mapping[str, str], Scope] | None:
        """A remote tool's `x-mcp-header` arguments and scope, as last listed; None before it has been, or
        when it has none (`GatewayBackend.list_tools` remembers annotated tools only, and a bounded number)."""
        return self._param_headers.get(tool_name)

    def reset(self) -> None:
        """Also forget the resolved backend (its settings may have changed) and what it said about itself."""
        super().reset()
        self._remote = None
        self._described = None

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
