"""A kind of remote written outside the package, in one module, as a project would: a registry of this
process served through the MCP client as if it were remote (`"BACKEND": "tests.client.backends.InProcess"`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.utils.module_loading import import_string

from mcp_django import Registry
from mcp_django.client.remote import RemoteConnection
from mcp_django.client.streams import NotificationListener
from mcp_django.protocol import Connection, MessageHandler
from mcp_django.protocol.jsonrpc import Message, notification

registry = Registry("in-process")


@registry.tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


class InProcess(RemoteConnection):
    """`{"BACKEND": "tests.client.backends.InProcess", "REGISTRY": "<dotted path to a Registry>"}`."""

    transport = "memory"
    config_keys = frozenset({"REGISTRY"})

    @classmethod
    def config_problems(cls, config: Mapping[str, Any]) -> list[str]:
        if not isinstance(config.get("REGISTRY"), str):
            return ["REGISTRY must be the dotted path to a Registry"]
        return []

    @classmethod
    def location(cls, config: Mapping[str, Any]) -> str:
        return f"registry {config['REGISTRY']}"

    _handler: MessageHandler | None = None

    async def _start(self) -> None:
        served: Registry = import_string(dict(self.server.options)["REGISTRY"])
        self._handler = MessageHandler(served.backend(), server_info={"name": "in-process", "version": "0"})
        self._peer = Connection(transport="memory")

    async def _round_trip(self, request: Message, on_notification: NotificationListener | None) -> Message:
        assert self._handler is not None
        answer: Message = {}
        async for item in self._handler.stream(request, self._peer):
            if "method" in item:
                await self.dispatch(item, on_notification)
            else:
                answer = item
        return answer

    async def _notify(self, method: str, params: dict[str, Any] | None) -> None:
        assert self._handler is not None
        await self._handler.handle(notification(method, params), self._peer)

    async def _listen(self) -> bool:
        return False

    async def _stop(self) -> None:
        self._handler = None
