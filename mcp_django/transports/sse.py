"""Server-sent events: how JSON-RPC messages travel on a `text/event-stream` response."""

from __future__ import annotations

import re
import secrets
from collections.abc import AsyncIterator
from typing import Any, Final

from mcp_django.protocol import InternalError
from mcp_django.protocol.jsonrpc import dump_json, request_id_of

SSE_HEADERS: Final[dict[str, str]] = {
    "Content-Type": "text/event-stream",
    "Cache-Control": "no-cache",
    # Tell nginx and friends to pass events through as they come instead of buffering them.
    "X-Accel-Buffering": "no",
}


def dump_message(message: Any) -> bytes:
    """Serialize a JSON-RPC message; a message that cannot be serialized becomes an internal error.

    Non-ASCII is escaped, so lone surrogates a client sent and the server echoes cannot break encoding.
    """
    try:
        return dump_json(message)
    except (TypeError, ValueError, RecursionError):
        return dump_json(InternalError().to_response(request_id_of(message)))


def format_event(data: bytes, event_id: str, event: str = "message") -> bytes:
    """Return one SSE event carrying `data` (a JSON document, so it holds no newline)."""
    return b"id: %s\nevent: %s\ndata: %s\n\n" % (event_id.encode("ascii"), event.encode("ascii"), data)


PRIMING_RETRY_MS: Final = 1000
"""The `retry` a priming event suggests to clients that reconnect."""

_STREAM_EVENT_ID: Final = re.compile(r"[0-9a-f]{16}-[0-9]+")


def priming_event(event_id: str) -> bytes:
    """An event with an id and empty data (SEP-1699): it sends the response's headers at once, and tells
    the client where it is before the first message comes."""
    return b"id: %s\nretry: %d\ndata: \n\n" % (event_id.encode("ascii"), PRIMING_RETRY_MS)


def is_stream_event_id(value: str) -> bool:
    """Whether `value` is an event id `event_stream` made (a stream that keeps nothing to replay)."""
    return _STREAM_EVENT_ID.fullmatch(value) is not None


async def event_stream(messages: AsyncIterator[Any], *, priming: bool = False) -> AsyncIterator[bytes]:
    """Encode each message of `messages` as an SSE `message` event with an id unique to this stream.

    With `priming`, a priming event (number 0) goes first, before `messages` yields anything.
    """
    prefix = secrets.token_hex(8)
    number = 0
    if priming:
        yield priming_event(f"{prefix}-0")
    async for message in messages:
        number += 1
        yield format_event(dump_message(message), f"{prefix}-{number}")
