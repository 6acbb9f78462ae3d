"""Helpers for the declaration tests: a protocol `RequestContext` whose stream is a list."""

from __future__ import annotations

from typing import Any

from mcp_types.methods import serialize_server_result

from mcp_django.protocol.context import Connection, RequestContext, SessionState
from mcp_django.protocol.versions import Era

__all__ = ["WIRE_VERSION", "make_request", "wire"]

WIRE_VERSION = "2025-11-25"


def make_request(
    method: str = "tools/call",
    *,
    progress_token: str | int | None = None,
    log_level: str | None = None,
    principal: Any = None,
    endpoint: Any = None,
    session: SessionState | None = None,
    client_capabilities: dict[str, Any] | None = None,
) -> tuple[RequestContext, list[dict[str, Any]]]:
    """Return a handshake-era request context and the list its notifications land in."""
    sent: list[dict[str, Any]] = []

    async def emit(message: dict[str, Any]) -> None:
        sent.append(message)

    connection = Connection(principal=principal, endpoint=endpoint, session=session)
    request = RequestContext(
        method=method,
        request_id=7,
        era=Era.HANDSHAKE,
        protocol_version=WIRE_VERSION,
        connection=connection,
        client_capabilities=client_capabilities or {},
        log_level=log_level,
        progress_token=progress_token,
        emit=emit,
    )
    return request, sent


def wire(method: str, result: Any) -> dict[str, Any]:
    """Validate `result` as the result of `method` with mcp-types and return its wire dump."""
    return serialize_server_result(method, WIRE_VERSION, result)
