"""What a request whose serving raised outside the protocol core (admission, sessions) is answered with.

A database that is unavailable now (`mcp_django.unavailable`) is a `ServiceUnavailable` answering the
request's own id: a body not read yet (the database failed during admission) is read for it, within
the usual limits. Anything else is logged and answered as an internal error, with a null id.
"""

from __future__ import annotations

import asyncio
import logging

from mcp_django.conf import mcp_settings
from mcp_django.protocol.errors import ServiceUnavailable
from mcp_django.protocol.jsonrpc import MCPError, RequestId, parse_json, request_id_of
from mcp_django.transports.body import ClientGone, ReadOnce

__all__ = ["failure"]

logger = logging.getLogger("mcp_django.transports.http")


async def failure(exc: Exception, method: str, path: str, body: bytes | ReadOnce) -> tuple[Exception, RequestId | None]:
    """The error a failed request is answered with, and the request id to answer it with."""
    if not isinstance(exc, ServiceUnavailable):
        from mcp_django.unavailable import database_unavailable, is_database_unavailable

        if not is_database_unavailable(exc):
            logger.exception("Unhandled error while serving %s /%s", method, path, exc_info=exc)
            return exc, None
        exc = database_unavailable(exc)
    limit = mcp_settings.MAX_REQUEST_BYTES
    try:
        if isinstance(body, ReadOnce):
            async with asyncio.timeout(mcp_settings.REQUEST_BODY_TIMEOUT):
                body = await body(limit)
        return exc, request_id_of(parse_json(body)) if body and len(body) <= limit else None
    except (MCPError, ClientGone, TimeoutError):
        return exc, None  # no id to answer with: null, as JSON-RPC has it
