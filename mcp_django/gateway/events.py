"""A remote server's events (`io.modelcontextprotocol/events`, SEP-3415) served through a gateway or a hub.

Where a remote server advertises the events extension, its `RemoteSource` is an `events.sources.EventSource`:
the endpoint serves the extension, lists the remote's types under the names callers use (a hub's
namespace before each, as for tools: `books_book.added`) and forwards a poll or a push stream of one on the
caller's behalf (with the server's own credentials, or the caller's token for an `"AUTH": "oauth"` server).
A push stream's notifications are relayed on the caller's stream, renamed and re-marked with the caller's
own subscription id; the remote's stream ends when the caller's does. The source's `scope` applies (a
caller below it sees none of the remote's types), as does the admin's switch of the remote.

Webhooks are not forwarded (the remote would sign them for the gateway's principal): a forwarded type's
`delivery` lists poll and push only. docs/events.md, "Through a gateway or a hub".
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from typing import Any, Protocol

from mcp_django.client.config import ServerConfig
from mcp_django.events import wire
from mcp_django.events.access import caller_scope
from mcp_django.events.errors import EventNotFound
from mcp_django.exceptions import BackendUnavailable, RemoteError
from mcp_django.gateway.forwarding import local_result
from mcp_django.gateway.tasks import switched_on
from mcp_django.gateway.upstream import connection_for
from mcp_django.protocol.context import RequestContext
from mcp_django.protocol.jsonrpc import Message
from mcp_django.scopes import Scope

logger = logging.getLogger("mcp_django.gateway")

_FORWARDED_MODES = (wire.POLL_MODE, wire.PUSH_MODE)


class _Remote(Protocol):
    """What `RemoteEvents` needs of the source it is part of."""

    name: str
    scope: Scope

    @property
    def remote(self) -> ServerConfig: ...

    def description(self) -> Any: ...

    def outer_name(self, name: str) -> str: ...

    def inner_name(self, name: str) -> str | None: ...

    async def forward(self, method: str, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]: ...


class RemoteEvents:
    """A remote source's event types (`events.sources.EventSource`), forwarded by poll and push."""

    __slots__ = ()

    def offers_events(self: _Remote) -> bool:
        """Whether the remote server advertised the events extension when last reached."""
        described = self.description()
        return described is not None and wire.EXTENSION in described.extensions

    def serves_event(self: _Remote, name: str) -> bool:
        return self.inner_name(name) is not None

    async def list_events(self: _Remote, ctx: RequestContext) -> list[dict[str, Any]]:
        if not await _reaches(self, ctx):
            return []
        try:
            result = await self.forward(wire.LIST, {}, ctx)
        except (BackendUnavailable, RemoteError) as error:
            logger.warning("Remote MCP server %r did not list its events: %s", self.name, error)
            return []
        listed: list[dict[str, Any]] = []
        for described in result.get("events") or ():
            name, delivery = described.get("name"), described.get("delivery")
            if not isinstance(name, str) or not isinstance(delivery, list):
                continue
            offered = [mode for mode in delivery if mode in _FORWARDED_MODES]
            if offered:
                listed.append({**described, "name": self.outer_name(name), "delivery": offered})
        return listed

    async def poll_events(self: _Remote, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]:
        sent = await _sent(self, params, ctx)
        result = local_result(await self.forward(wire.POLL, sent, ctx))
        events = result.get("events")
        if isinstance(events, list):
            result["events"] = [_renamed(self, each) for each in events]
        return result

    async def stream_events(self: _Remote, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]:
        sent = await _sent(self, params, ctx)
        mine = {wire.SUBSCRIPTION_ID_META: ctx.request_id}

        async def relay(message: Message) -> None:
            method, body = message.get("method"), message.get("params")
            if isinstance(method, str) and method.startswith("notifications/events/") and isinstance(body, dict):
                body = _renamed(self, {key: value for key, value in body.items() if key != "_meta"})
                await ctx.send_notification(method, {**body, "_meta": dict(mine)})

        connection = await connection_for(self.remote, ctx.principal)
        return local_result(await connection.request(wire.STREAM, sent, on_notification=relay, timeout=math.inf))


async def _reaches(source: _Remote, ctx: RequestContext) -> bool:
    """Whether the caller reaches the remote: its scope is the source's at least, and the admin left it on."""
    scope = await caller_scope(ctx)
    return scope is not None and scope >= source.scope and switched_on(ctx, source.name)


async def _sent(source: _Remote, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]:
    """`params` with the remote's name of the type, for a caller who reaches it (else `-32011`)."""
    name = params.get("name")
    inner = source.inner_name(name) if isinstance(name, str) else None
    if inner is None or not await _reaches(source, ctx):
        raise EventNotFound(name)
    return {key: value for key, value in params.items() if key != "_meta"} | {"name": inner}


def _renamed(source: _Remote, occurrence: Any) -> Any:
    """An occurrence (or a notification's params) with the type named as callers name it."""
    if isinstance(occurrence, dict) and isinstance(occurrence.get("name"), str):
        return {**occurrence, "name": source.outer_name(occurrence["name"])}
    return occurrence
