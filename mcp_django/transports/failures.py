"""What a failed request is answered with: the HTTP status of a JSON-RPC error, and the answer to a request
whose serving raised outside the protocol core (admission, sessions).

An error saying the service is unavailable now (`protocol.errors.is_unavailable`) is a 503 with
`Retry-After: MCP_DJANGO["RETRY_AFTER"]`, in either era. A database that is unavailable now
(`mcp_django.runtime.unavailable`) is a `ServiceUnavailable` answering the request's own id: a body not read
yet (the database failed during admission) is read for it, within the usual limits.
Anything else is logged and answered as an internal error, with a null id.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from mcp_django.conf import mcp_settings
from mcp_django.protocol import Era
from mcp_django.protocol.errors import ServiceUnavailable, http_status, is_unavailable
from mcp_django.protocol.jsonrpc import MCPError, RequestId, parse_json, request_id_of
from mcp_django.transports.body import ClientGone, ReadOnce

logger = logging.getLogger("mcp_django.transports.http")


def error_status(era: Era, error: Any) -> tuple[int, dict[str, str]]:
    """The HTTP status carrying the JSON-RPC `error` member in `era`, and the headers that go with it."""
    if is_unavailable(error):
        return 503, {"Retry-After": str(mcp_settings.RETRY_AFTER)}
    code = error.get("code") if isinstance(error, dict) else None
    return (http_status(era, code) if isinstance(code, int) else 200), {}


async def failure(exc: Exception, method: str, path: str, body: bytes | ReadOnce) -> tuple[Exception, RequestId | None]:
    """The error a failed request is answered with, and the request id to answer it with."""
    if not isinstance(exc, ServiceUnavailable):
        from mcp_django.runtime.unavailable import database_unavailable, is_database_unavailable

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
