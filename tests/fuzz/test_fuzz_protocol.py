"""The protocol core under arbitrary messages: `MessageHandler.handle` with any JSON value, on a fresh
connection, one that completed the handshake, and one without sessions (issue 13.13).

Every message is answered by a valid JSON-RPC response with the request's id (or by nothing, for what
is not a request), and nothing raises. No Django: the core is tested alone.
"""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from mcp_django.protocol import Connection, MessageHandler
from tests.fuzz.strategies import check_reply, is_request, messages
from tests.protocol.backends import EchoBackend

WAIT_S = 10.0
TOOLS = ["echo", "tool_000", "progress", "boom", "bad_result", "needs_sampling", "ask_name", "nope"]
"""The backend's tools a message may name (not `slow`, which sleeps on purpose), and an unknown one."""

handler = MessageHandler(EchoBackend(), server_info={"name": "fuzz", "version": "1"}, page_size=2)


async def _connection(kind: str) -> Connection:
    if kind == "stateless":
        return Connection(sessions=False)
    connection = Connection()
    if kind == "session":
        await handler.handle(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "fuzz", "version": "1"},
                },
            },
            connection,
        )
        await handler.handle({"jsonrpc": "2.0", "method": "notifications/initialized"}, connection)
    return connection


@given(message=messages(TOOLS), kind=st.sampled_from(["fresh", "session", "stateless"]))
async def test_every_message_gets_a_valid_answer_with_its_id_or_none(message: Any, kind: str) -> None:
    connection = await _connection(kind)
    async with asyncio.timeout(WAIT_S):
        reply = await handler.handle(message, connection)

    if reply is None:
        assert not is_request(message), message
    else:
        check_reply(reply, message)
