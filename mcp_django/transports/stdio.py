"""stdio: newline-delimited JSON-RPC over a pair of byte streams, for clients that launch the server.

The client starts `manage.py mcp_stdio` as a subprocess, writes one JSON-RPC message per line to its
stdin and reads one per line from its stdout. This module holds the transport; the management command
only picks the endpoint and the user and wires the process's streams to it.

- `read_lines` splits the input into lines. A line longer than the limit is never held in memory: it
  is dropped as it arrives and reading resumes after its newline.
- `serve_stdio` answers each line through a `DuplexTransport`: a line that is not JSON gets `-32700`,
  an over-long one `-32600`, and the loop goes on. Replies are written as requests complete, so a slow
  request never holds up a later quick one. End of input ends the loop once the requests in flight
  are answered.
- `protect_stdout` keeps everything but protocol messages off stdout (`print()`, logging handlers bound
  to stdout, child processes): the spec allows nothing else there.

Nothing here needs Django settings: tests drive it with asyncio streams.
"""

from __future__ import annotations

import asyncio
import os
import queue
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import BinaryIO, Final

from mcp_django.protocol import Connection, MessageHandler
from mcp_django.protocol.jsonrpc import Message
from mcp_django.transports.duplex import DuplexTransport, too_large

__all__ = ["CHUNK_SIZE", "Read", "Write", "protect_stdout", "read_lines", "serve_stdio", "threaded_reader", "writer"]

CHUNK_SIZE: Final = 64 * 1024

Read = Callable[[], Awaitable[bytes]]
"""Returns the next chunk of input, or `b""` at end of input."""
Write = Callable[[bytes], Awaitable[None]]
"""Writes bytes to the output."""


async def read_lines(read: Read, limit: int) -> AsyncIterator[bytes | None]:
    """Yield each line of the input, without its line ending; None for a line over `limit` bytes.

    An over-long line is discarded as it streams in (it is never buffered whole), and the next line
    starts after its newline. A last line without a newline is yielded at end of input.
    """
    line = bytearray()
    dropping = False
    while chunk := await read():
        start = 0
        while (end := chunk.find(b"\n", start)) != -1:
            if dropping:
                dropping = False  # the end of the dropped line: resynchronized
            elif len(line) + end - start > limit:
                yield None
            else:
                line += chunk[start:end]
                yield _without_cr(line)
            line.clear()
            start = end + 1
        if not dropping:
            if len(line) + len(chunk) - start > limit:
                dropping = True
                line.clear()
                yield None
            else:
                line += chunk[start:]
    if line and not dropping:
        yield _without_cr(line)


def _without_cr(line: bytearray) -> bytes:
    return bytes(line[:-1] if line.endswith(b"\r") else line)


async def serve_stdio(
    handler: MessageHandler,
    connection: Connection,
    read: Read,
    write: Write,
    *,
    limit: int,
    refresh: Callable[[], Awaitable[None]] | None = None,
) -> None:
    """Serve newline-delimited JSON-RPC from `read` to `write` until end of input.

    Args:
        handler: the protocol core of the endpoint being served.
        connection: the process's `Connection` (it holds the handshake session, if one is opened).
        read: the input, chunk by chunk.
        write: the output; each call gets one message and its newline.
        limit: the longest line accepted, in bytes (`MAX_REQUEST_BYTES`).
        refresh: brings the endpoint's overlay up to date before each message (`DuplexTransport`).

    When the connection has a notification source, server notifications are relayed to a
    handshake-era client as they are sent (see `DuplexTransport.push`).
    """

    async def send(data: bytes) -> None:
        await write(data + b"\n")

    transport = DuplexTransport(handler, connection, send, refresh=refresh)
    source = connection.notifications
    relay = asyncio.ensure_future(_relay(await source(), transport)) if source is not None else None
    try:
        async for line in read_lines(read, limit):
            if line is None:
                await transport.send(too_large(limit))
            elif line.strip():
                await transport.receive_text(line)
        await transport.drain()
    finally:
        if relay is not None:
            relay.cancel()
            await asyncio.gather(relay, return_exceptions=True)
        await transport.aclose()


async def _relay(notes: AsyncIterator[Message], transport: DuplexTransport) -> None:
    async for note in notes:
        await transport.push(note)


def threaded_reader(stream: BinaryIO, chunk_size: int = CHUNK_SIZE) -> Read:
    """Return a `Read` over a blocking binary stream (stdin), read in a daemon thread.

    Works for pipes, files and consoles on every platform, never blocks the event loop, and never
    keeps the process alive: the thread reads one chunk only when asked for one.
    """
    asks: queue.SimpleQueue[asyncio.Future[bytes]] = queue.SimpleQueue()
    read_chunk = getattr(stream, "read1", stream.read)

    def run() -> None:
        while True:
            future = asks.get()
            try:
                chunk: bytes = read_chunk(chunk_size)
            except (OSError, ValueError):  # closed under us: that is the end of the input
                chunk = b""
            future.get_loop().call_soon_threadsafe(_resolve, future, chunk)
            if not chunk:
                return

    threading.Thread(target=run, name="mcp-stdio-reader", daemon=True).start()

    async def read() -> bytes:
        future: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        asks.put(future)
        return await future

    return read


def _resolve(future: asyncio.Future[bytes], chunk: bytes) -> None:
    if not future.done():
        future.set_result(chunk)


def writer(stream: BinaryIO) -> Write:
    """Return a `Write` that writes to a blocking binary stream (stdout) and flushes every message."""

    async def write(data: bytes) -> None:
        stream.write(data)
        stream.flush()

    return write


def protect_stdout() -> BinaryIO:
    """Reserve the process's stdout for protocol messages and return the stream to write them to.

    File descriptor 1 and `sys.stdout` are pointed at stderr, so a stray `print()`, a logging handler
    writing to stdout, or a child process inheriting the descriptor lands in stderr instead.
    """
    sys.stdout.flush()
    protocol = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    return protocol
