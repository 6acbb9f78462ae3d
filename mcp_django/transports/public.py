"""The body limit of the package's public views beside the MCP endpoints: the OAuth server and the metadata.

Anyone can send a body to `/oauth/register/`, `/oauth/token/`, `/oauth/login/`, `/.well-known/...` or the
`/mcp/upstream/` pages without credentials, and Django's handler reads a whole body before any view runs.
`public_view(view)` marks such a view: it refuses a declared body over `MAX_PUBLIC_REQUEST_BYTES` (413)
where Django serves it (WSGI), the fast path (`mcp_django.asgi`) reads the body of a marked view's request itself,
no further than that limit and within `REQUEST_BODY_TIMEOUT`, before Django sees it
(`read_public_body`), and `mcp_django.servers.daphne` refuses it as it arrives. docs/deployment.md,
"Timeouts and limits".
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from typing import Any, Final, TypeVar

from django.http import HttpRequest, HttpResponseBase, JsonResponse

from mcp_django.conf import mcp_settings
from mcp_django.protocol import InvalidRequest
from mcp_django.protocol.jsonrpc import dump_json
from mcp_django.transports.body import (
    CLIENT_GONE,
    ClientGone,
    declared_length,
    payload_too_large,
    read_asgi_body,
    request_timeout,
)

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
View = TypeVar("View", bound=Callable[..., HttpResponseBase])

PUBLIC_VIEW: Final = "mcp_public_view"
"""The attribute `public_view` sets on a view: the fast path and the daphne guard look for it."""


def public_view(view: View) -> View:
    """Mark `view` as a public view of the package, and refuse a declared body over the public limit (413)."""

    @functools.wraps(view)
    def limited(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        limit = int(mcp_settings.MAX_PUBLIC_REQUEST_BYTES)
        declared = declared_length({"content-length": request.META.get("CONTENT_LENGTH") or ""})
        if declared is not None and declared > limit:
            return JsonResponse(InvalidRequest(payload_too_large(limit)).to_response(None), status=413)
        return view(request, *args, **kwargs)

    setattr(limited, PUBLIC_VIEW, True)
    return limited  # type: ignore[return-value]  # the same signature, wrapped


def is_public_view(view: Any) -> bool:
    """Whether a resolved view is one `public_view` marked."""
    return bool(getattr(view, PUBLIC_VIEW, False))


class Refusal(Exception):
    """A public request refused before Django saw it: the status, and the whole JSON body (empty: nobody to answer)."""

    def __init__(self, status: int, body: bytes = b"") -> None:
        super().__init__(status)
        self.status = status
        self.body = body


def _refusal(status: int, message: str) -> Refusal:
    return Refusal(status, dump_json(InvalidRequest(message).to_response(None)))


async def read_public_body(receive: Receive, headers: Mapping[str, str]) -> Receive:
    """Read a public request's body (at most `MAX_PUBLIC_REQUEST_BYTES`); a `receive` that hands it over whole.

    After the body, the returned `receive` is the server's (only a disconnect can come).

    Raises:
        Refusal: 413 for a body over the limit (declared, or as it arrives), 408 for one not whole within
            `REQUEST_BODY_TIMEOUT`, `CLIENT_GONE` for a client that left while sending.
    """
    limit = int(mcp_settings.MAX_PUBLIC_REQUEST_BYTES)
    declared = declared_length(headers)
    if declared is not None and declared > limit:
        raise _refusal(413, payload_too_large(limit))
    timeout = float(mcp_settings.REQUEST_BODY_TIMEOUT)
    try:
        async with asyncio.timeout(timeout):
            body = await read_asgi_body(receive, limit)
    except TimeoutError:
        raise _refusal(408, request_timeout(timeout)) from None
    except ClientGone:
        raise Refusal(CLIENT_GONE) from None
    if len(body) > limit:
        raise _refusal(413, payload_too_large(limit))
    pending: list[Message] = [{"type": "http.request", "body": body, "more_body": False}]

    async def replay() -> Message:
        return pending.pop() if pending else await receive()

    return replay
