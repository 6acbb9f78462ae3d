"""Resources: list, templates, read, and the handshake-era subscription pair."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mcp_django.protocol.context import RequestContext
from mcp_django.protocol.features.base import MethodSpec
from mcp_django.protocol.versions import Era

if TYPE_CHECKING:
    from mcp_django.protocol.handler import MessageHandler


async def list_resources(handler: MessageHandler, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]:
    return handler.page("resources", await handler.backend.list_resources(ctx), params)


async def list_templates(handler: MessageHandler, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]:
    return handler.page("resourceTemplates", await handler.backend.list_resource_templates(ctx), params)


async def read_resource(handler: MessageHandler, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]:
    return dict(await handler.backend.read_resource(params["uri"], ctx))


async def subscribe(handler: MessageHandler, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]:
    session = ctx.session
    if session is not None and params["uri"] not in session.subscriptions:
        session.subscriptions = (*session.subscriptions, params["uri"])
        session.changed = True
    return {}


async def unsubscribe(handler: MessageHandler, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]:
    session = ctx.session
    if session is not None and params["uri"] in session.subscriptions:
        session.subscriptions = tuple(uri for uri in session.subscriptions if uri != params["uri"])
        session.changed = True
    return {}


_HANDSHAKE = frozenset({Era.HANDSHAKE})

RESOURCE_METHODS = (
    MethodSpec("resources/list", list_resources, feature="resources", cacheable=True),
    MethodSpec("resources/templates/list", list_templates, feature="resources", cacheable=True),
    MethodSpec("resources/read", read_resource, feature="resources", cacheable=True),
    MethodSpec("resources/subscribe", subscribe, eras=_HANDSHAKE, feature="resources", operation=False),
    MethodSpec("resources/unsubscribe", unsubscribe, eras=_HANDSHAKE, feature="resources", operation=False),
)
