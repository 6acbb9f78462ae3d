"""Fixtures for the protocol core tests, which need no Django at all."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_django.protocol import Connection, MessageHandler
from tests.protocol.backends import EchoBackend

SERVER_INFO = {"name": "protocol-tests", "version": "1.0"}
STATELESS_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def request(method: str, params: dict[str, Any] | None = None, request_id: int | str = 1) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def stateless(
    method: str, params: dict[str, Any] | None = None, request_id: int | str = 1, *, meta: dict[str, Any] | None = None
) -> dict[str, Any]:
    return request(method, {**(params or {}), "_meta": {**STATELESS_META, **(meta or {})}}, request_id)


@pytest.fixture
def backend() -> EchoBackend:
    return EchoBackend()


@pytest.fixture
def handler(backend: EchoBackend) -> MessageHandler:
    return MessageHandler(backend, server_info=SERVER_INFO, page_size=2, cache_ttl_ms=5000, cache_scope="private")


@pytest.fixture
async def session(handler: MessageHandler) -> Connection:
    """A connection that completed the handshake at 2025-11-25."""
    connection = Connection()
    await handler.handle(
        request(
            "initialize",
            {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
        ),
        connection,
    )
    await handler.handle({"jsonrpc": "2.0", "method": "notifications/initialized"}, connection)
    return connection
