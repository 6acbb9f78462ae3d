"""Reading a request body within limits: never more than `MAX_REQUEST_BYTES`, never longer than
`REQUEST_BODY_TIMEOUT`, and only once the request has been admitted.

`StreamableHTTP` asks for the body through a `BodyReader` after the checks that need no body
(admission, Accept, Content-Type, a `Content-Length` over the limit): a request refused by those is
answered with its body unread. The fast path reads from ASGI `receive` (`read_asgi_body`), the Django
view from its request. `bounded_receive` guards the body of an MCP request the fast path hands to
Django's own handler (which reads the whole body before any view runs). docs/deployment.md,
"Timeouts and limits", says what the ASGI servers do themselves.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine, Mapping, MutableMapping
from typing import Any, Final

from mcp_django.protocol.coroutines import resume

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]

BodyReader = Callable[[int], Awaitable[bytes]]
"""`await read(limit)`: the request body, or its first `limit + 1` bytes when it is longer (never more).

Raises:
    ClientGone: the client disconnected before it finished sending.
"""

CLIENT_GONE: Final = 499
"""The status of an answer nobody will read: the client went away while sending (nginx's code for it)."""


class ReadOnce:
    """A `BodyReader` that reads at most once and keeps what it read (`body`)."""

    __slots__ = ("body", "read")

    def __init__(self, read: BodyReader) -> None:
        self.read = read
        self.body: bytes | None = None

    async def __call__(self, limit: int) -> bytes:
        if self.body is None:
            self.body = await self.read(limit)
        return self.body


class ClientGone(Exception):
    """The client disconnected before its request body was complete."""


def payload_too_large(limit: int) -> str:
    """The message of a 413: what every transport and server guard says."""
    return f"Payload Too Large: the body exceeds {limit} bytes"


def headers_too_large(limit: int) -> str:
    """The message of a 431."""
    return f"Request Header Fields Too Large: over {limit} bytes"


def request_timeout(seconds: float) -> str:
    """The message of a 408."""
    return f"Request Timeout: the request did not arrive whole within {seconds:g} s"


def declared_length(headers: Mapping[str, str]) -> int | None:
    """The request's `Content-Length` as a number; None when absent or not a number."""
    declared = headers.get("content-length", "")
    return int(declared) if declared.isdigit() else None


def header_bytes(headers: Mapping[str, str]) -> int:
    """The size of the request's header fields as they came on the wire (name, `: `, value, CRLF)."""
    return sum(len(name) + len(value) + 4 for name, value in headers.items())


async def read_within(read: BodyReader, limit: int, seconds: float) -> bytes:
    """`await read(limit)`, bounded by `seconds` once it has to wait.

    A body the server has already received (most are: a small POST arrives with its headers) is read
    without waiting, and then no timer is set; only a read that waits for the client runs under
    `asyncio.timeout`, from the moment it waits.

    Raises:
        TimeoutError: the body did not arrive within `seconds`.
        ClientGone: the client disconnected before it finished sending.
    """
    reading = read(limit)
    if not isinstance(reading, Coroutine):  # an awaitable of another kind: no stepping it by hand
        async with asyncio.timeout(seconds):
            return await reading
    try:
        awaited = reading.send(None)
    except StopIteration as finished:
        return finished.value  # type: ignore[no-any-return]  # what `read` returns: bytes
    async with asyncio.timeout(seconds):
        return await resume(reading, awaited)  # type: ignore[no-any-return]


async def read_asgi_body(receive: Receive, limit: int) -> bytes:
    """Read an ASGI request body from `receive`, one chunk past `limit` at most.

    Raises:
        ClientGone: an `http.disconnect` came before the last chunk.
    """
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            raise ClientGone
        chunk = message.get("body", b"")
        chunks.append(chunk)
        size += len(chunk)
        if not message.get("more_body", False) or size > limit:
            return b"".join(chunks)


def bounded_receive(receive: Receive, headers: Mapping[str, str], limit: int) -> Receive:
    """`receive` for an application that reads the whole body (Django's handler): the body ends one
    chunk past `limit`, or at once, empty, when `Content-Length` is already over it.

    The rest of a cut body is never asked for: the server stops reading the socket (and drops it once
    the answer is sent), and a later `receive()` (Django's wait for a disconnect) waits until the
    request ends. The view then sees a body, or a `Content-Length`, over the limit and answers 413.
    """
    declared = declared_length(headers)
    received = 0
    cut = complete = False

    async def bounded() -> Message:
        nonlocal received, cut, complete
        if cut:
            await asyncio.get_running_loop().create_future()  # cancelled when the request ends
        if complete:
            return await receive()  # only a disconnect can come now
        if declared is not None and declared > limit:
            cut = True
            return {"type": "http.request", "body": b"", "more_body": False}
        message = await receive()
        if message["type"] == "http.request":
            received += len(message.get("body", b""))
            if not message.get("more_body", False):
                complete = True
            elif received > limit:
                cut = True
                message = {**message, "more_body": False}
        return message

    return bounded
