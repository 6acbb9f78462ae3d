"""The admin's overlay: what the core asks (`endpoints.overlay.Overlay`), answered from this process's snapshot."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from mcp_django.control.state import ControlState, control_state
from mcp_django.endpoints.mounts import Mounted
from mcp_django.protocol.context import RequestContext
from mcp_django.protocol.hooks import CallNext, OperationHook
from mcp_django.protocol.jsonrpc import InvalidParams
from mcp_django.providers import ProviderSource
from mcp_django.scopes import Scope
from mcp_django.sources import Source
from mcp_django.sources.delegating import DelegatingSource

if TYPE_CHECKING:  # the gateway (and the MCP client under it) loads with the first remote source, not with the admin
    from mcp_django.gateway.source import RemoteSource


class SwitchedProviderSource(DelegatingSource[ProviderSource]):
    """A provider's source as the admin set it: on or off, its minimum scope overridden (`ProviderState`).

    Both are read from the snapshot on every request, so a handler built before a change serves the new state.
    """

    __slots__ = ("state",)

    def __init__(self, source: ProviderSource, state: ControlState) -> None:
        super().__init__(source)
        self.state = state

    @property
    def scope(self) -> Scope:  # type: ignore[override]  # a property over the base's class attribute
        return self.state.provider_scope(self.source.provider.id, self.source.provider.scope)

    @property
    def enabled(self) -> bool:  # type: ignore[override]  # a property over the base's class attribute
        return self.state.provider_enabled(self.source.provider.id)


class SwitchedRemoteSource(DelegatingSource["RemoteSource"]):
    """A remote server's source as the admin set it (a `RemoteServer` row), read from the snapshot on every request.

    It stands in for the endpoint's `RemoteSource` in the backend and passes every operation to it, so
    what the source remembers (its description, its tools' header arguments) stays in one place.
    """

    __slots__ = ("state",)

    def __init__(self, source: RemoteSource, state: ControlState) -> None:
        super().__init__(source)
        self.state = state

    @property
    def scope(self) -> Scope:  # type: ignore[override]  # a property over the base's class attribute
        return self.state.remote_scope(self.source.name, self.source.scope)

    @property
    def enabled(self) -> bool:  # type: ignore[override]  # a property over the base's class attribute
        return self.state.remote_enabled(self.source.name)


class ToolSwitchHook:
    """The outermost hook of every endpoint: tools switched off in the admin are unknown.

    The state it reads was brought up to date where the message came in: at admission (HTTP), or
    before each message of a long-lived channel (WebSocket, stdio, `MCPTestClient`).
    """

    __slots__ = ("state",)

    def __init__(self, state: ControlState) -> None:
        self.state = state

    async def __call__(
        self, method: str, params: dict[str, Any], ctx: RequestContext, call_next: CallNext
    ) -> dict[str, Any]:
        disabled = self.state.snapshot.disabled_tools
        if disabled and method == "tools/call" and params.get("name") in disabled:
            raise InvalidParams(f"Unknown tool: {params.get('name')}")  # exactly as for a name nobody serves
        result = await call_next(params)
        if disabled and method == "tools/list" and isinstance(result.get("tools"), list):
            result = {**result, "tools": [tool for tool in result["tools"] if tool.get("name") not in disabled]}
        return result


class AdminOverlay:
    """The overlay `MCPDjangoConfig.ready()` installs: the admin's rows, applied from `control_state`."""

    __slots__ = ("state",)

    def __init__(self, state: ControlState = control_state) -> None:
        self.state = state

    async def refresh(self) -> None:
        await self.state.refresh()

    def wrap_sources(self, endpoint: Mounted, sources: Sequence[Source]) -> list[Source]:
        return [self._switched(source) for source in sources]

    def _switched(self, source: Source) -> Source:
        if isinstance(source, ProviderSource):
            return SwitchedProviderSource(source, self.state)
        from mcp_django.gateway.source import RemoteSource

        if isinstance(source, RemoteSource):
            return SwitchedRemoteSource(source, self.state)
        return source

    def interceptors(self, config: Any) -> Any:
        return self.state.overlay_interceptors(config)

    def interceptor_servers(self, config: Any) -> Any:
        return self.state.overlay_interceptor_servers(config)

    def hooks(self, endpoint: Mounted) -> list[OperationHook]:
        return [ToolSwitchHook(self.state)]
