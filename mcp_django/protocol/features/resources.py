"""Resources: list, templates, read, and the handshake-era subscription pair."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from mcp_django.protocol.context import RequestContext
from mcp_django.protocol.features.base import HANDSHAKE_ONLY, MethodSpec, Server
from mcp_django.protocol.jsonrpc import InvalidParams, ResourceNotFound

MAX_SUBSCRIPTIONS: Final = 256
"""Resource URIs one session may subscribe to: they are stored with it (templates match without end)."""


async def list_resources(server: Server, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]:
    return server.page("resources", await server.backend.list_resources(ctx), params)


async def list_templates(server: Server, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]:
    return server.page("resourceTemplates", await server.backend.list_resource_templates(ctx), params)


async def read_resource(server: Server, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]:
    return dict(await server.backend.read_resource(params["uri"], ctx))


async def subscribe(server: Server, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]:
    if not await server.backend.readable(params["uri"], ctx):
        raise ResourceNotFound(params["uri"])  # what the caller cannot read answers as unknown
    session = ctx.session
    if session is not None and params["uri"] not in session.subscriptions:
        if len(session.subscriptions) >= MAX_SUBSCRIPTIONS:
            raise InvalidParams(f"Invalid params: a session may subscribe to at most {MAX_SUBSCRIPTIONS} resources")
        session.subscriptions = (*session.subscriptions, params["uri"])
        session.changed = True
    return {}


async def unsubscribe(server: Server, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]:
    session = ctx.session
    if session is not None and params["uri"] in session.subscriptions:
        session.subscriptions = tuple(uri for uri in session.subscriptions if uri != params["uri"])
        session.changed = True
    return {}


RESOURCE_METHODS = (
    MethodSpec("resources/list", list_resources, feature="resources", cacheable=True),
    MethodSpec("resources/templates/list", list_templates, feature="resources", cacheable=True),
    MethodSpec("resources/read", read_resource, feature="resources", cacheable=True),
    MethodSpec("resources/subscribe", subscribe, eras=HANDSHAKE_ONLY, feature="resources", operation=False),
    MethodSpec("resources/unsubscribe", unsubscribe, eras=HANDSHAKE_ONLY, feature="resources", operation=False),
)
