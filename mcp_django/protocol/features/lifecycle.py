"""Lifecycle and utility methods: `initialize`, `ping`, `logging/setLevel`, `server/discover`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mcp_django.protocol.context import RequestContext, SessionState
from mcp_django.protocol.features.base import MethodSpec
from mcp_django.protocol.versions import SUPPORTED_VERSIONS, Era, negotiate_handshake_version

if TYPE_CHECKING:
    from mcp_django.protocol.handler import MessageHandler

_HANDSHAKE = frozenset({Era.HANDSHAKE})
_STATELESS = frozenset({Era.STATELESS})


async def initialize(handler: MessageHandler, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]:
    version = negotiate_handshake_version(params.get("protocolVersion"))
    connection = ctx.connection
    if connection.sessions:
        connection.session = SessionState(
            protocol_version=version,
            client_capabilities=dict(params.get("capabilities") or {}),
            client_info=params.get("clientInfo"),
            changed=True,
        )
    ctx.protocol_version = version
    result: dict[str, Any] = {
        "protocolVersion": version,
        "capabilities": handler.capabilities(Era.HANDSHAKE),
        "serverInfo": handler.server_info,
    }
    if handler.instructions:
        result["instructions"] = handler.instructions
    return result


async def ping(handler: MessageHandler, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]:
    return {}


async def set_level(handler: MessageHandler, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]:
    session = ctx.session
    if session is not None:
        session.log_level = params["level"]
        session.changed = True
    return {}


async def discover(handler: MessageHandler, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]:
    result: dict[str, Any] = {
        "supportedVersions": list(SUPPORTED_VERSIONS),
        "capabilities": handler.capabilities(Era.STATELESS),
    }
    if handler.instructions:
        result["instructions"] = handler.instructions
    return result


LIFECYCLE_METHODS = (
    MethodSpec("initialize", initialize, eras=_HANDSHAKE, operation=False),
    MethodSpec("ping", ping, eras=_HANDSHAKE, operation=False),
    MethodSpec("logging/setLevel", set_level, eras=_HANDSHAKE, feature="logging", operation=False),
    MethodSpec("server/discover", discover, eras=_STATELESS, cacheable=True, operation=False),
)
