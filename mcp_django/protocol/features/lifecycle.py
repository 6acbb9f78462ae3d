"""Lifecycle and utility methods: `initialize`, `ping`, `logging/setLevel`, `server/discover`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp_django.protocol.context import RequestContext, SessionState
from mcp_django.protocol.features.base import HANDSHAKE_ONLY, STATELESS_ONLY, MethodSpec, Server
from mcp_django.protocol.versions import SUPPORTED_VERSIONS, Era, negotiate_handshake_version


async def initialize(server: Server, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]:
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
        "capabilities": server.capabilities(Era.HANDSHAKE),
        "serverInfo": server.server_info,
    }
    if server.instructions:
        result["instructions"] = server.instructions
    return result


async def ping(server: Server, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]:
    return {}


async def set_level(server: Server, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]:
    session = ctx.session
    if session is not None:
        session.log_level = params["level"]
        session.changed = True
    return {}


async def discover(server: Server, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]:
    result: dict[str, Any] = {
        "supportedVersions": list(SUPPORTED_VERSIONS),
        "capabilities": server.capabilities(Era.STATELESS),
    }
    if server.instructions:
        result["instructions"] = server.instructions
    return result


LIFECYCLE_METHODS = (
    MethodSpec("initialize", initialize, eras=HANDSHAKE_ONLY, operation=False),
    MethodSpec("ping", ping, eras=HANDSHAKE_ONLY, operation=False),
    MethodSpec("logging/setLevel", set_level, eras=HANDSHAKE_ONLY, feature="logging", operation=False),
    MethodSpec("server/discover", discover, eras=STATELESS_ONLY, cacheable=True, operation=False),
)
