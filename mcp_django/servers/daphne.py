"""daphne with the request limits applied while the request arrives, before the application sees it.

    python -m mcp_django.servers.daphne -b 0.0.0.0 -p 8000 myproject.asgi:application

takes every option of the `daphne` command. daphne (through Twisted) hands a request to the
application only once its whole body has arrived, and then queues every chunk of it in memory at
once; the application's own limits come too late. This command serves the same application with
three guards at the connection:

- a request for an MCP endpoint whose `Content-Length` is over `MAX_REQUEST_BYTES` (for the OAuth
  server's views and the metadata, `MAX_PUBLIC_REQUEST_BYTES`) is answered 413 before any of its body
  is read; one that sends more than that without declaring it (chunked) is answered 413 as soon as it
  passes the limit. Nothing past the limit is kept.
- a request whose header fields are over `MAX_HEADER_BYTES` is answered 431 (Twisted alone answers
  400 past 16 KiB in total, and drops the connection without a word for one line over 16 KiB).
- a request that has not arrived whole (headers and body) within `REQUEST_BODY_TIMEOUT` of its first
  byte is answered 408 (Twisted alone waits as long as a byte comes every 60 seconds).

Each refusal is a JSON-RPC error with `Connection: close`; the connection then reads and drops what the
client still sends for a moment (a lingering close), so the client reads the answer rather than a reset.
The application must be (or wrap nothing around) `mcp_django.asgi.get_asgi_application()`'s, which
knows the MCP endpoints; with another application only the header and time limits apply.
docs/deployment.md, "Timeouts and limits".
"""

from __future__ import annotations

import sys
from typing import Any, Final
from urllib.parse import unquote

from daphne.cli import CommandLineInterface
from daphne.http_protocol import HTTPFactory, WebRequest
from daphne.server import Server
from twisted.web import http

from mcp_django.conf import mcp_settings
from mcp_django.protocol import InvalidRequest
from mcp_django.protocol.jsonrpc import dump_json
from mcp_django.transports.body import headers_too_large, payload_too_large, request_timeout

LINGER_S: Final = 2.0
"""How long a refused connection keeps reading (and dropping) what the client still sends."""

REASONS: Final = {408: b"Request Timeout", 413: b"Content Too Large", 431: b"Request Header Fields Too Large"}


def refusal(status: int, message: str) -> bytes:
    """The whole HTTP response of a refusal: status line, headers, and the JSON-RPC error."""
    body = dump_json(InvalidRequest(message).to_response(None))
    head = b"HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n"
    return head % (status, REASONS[status], len(body)) + body


class GuardedRequest(WebRequest):
    """daphne's request, refused (413) when its body is over the limit of its path."""

    channel: GuardedChannel

    def gotLength(self, length: int | None) -> None:
        channel = self.channel
        limit = channel.body_limit()
        channel.body_left = channel.limit = limit
        if limit is not None and length is not None and length > limit:
            channel.refuse(413, payload_too_large(limit))
        super().gotLength(length)

    def handleContentChunk(self, data: bytes) -> None:
        channel = self.channel
        if channel.refused:
            return
        if channel.body_left is not None:
            channel.body_left -= len(data)
            if channel.body_left < 0:
                channel.refuse(413, payload_too_large(int(channel.limit or 0)))
                return
        super().handleContentChunk(data)


class GuardedChannel(http.HTTPChannel):
    """Twisted's HTTP/1.1 connection with the header limit, the arrival deadline and the refusals.

    It relies on what Twisted keeps for itself (`_path`, `_receivedHeaderSize`, `_handlingRequest`,
    `_respondToBadRequestAndDisconnect`, `_GenericHTTPChannelProtocol`); the tests of this module
    fail if a Twisted release renames them.
    """

    def __init__(self) -> None:
        super().__init__()
        self.refused = False
        self.body_left: int | None = None
        self.limit: int | None = None
        self._deadline: Any = None
        self._linger: Any = None
        self.totalHeadersSize = self.MAX_LENGTH = int(mcp_settings.MAX_HEADER_BYTES)

    def body_limit(self) -> int | None:
        """The body limit of the path being read: `MAX_REQUEST_BYTES` for an MCP endpoint,
        `MAX_PUBLIC_REQUEST_BYTES` for a public view of the package (the OAuth server), else None."""
        application = self.factory.server.application
        body_limit = getattr(application, "body_limit", None)
        if body_limit is None:
            return None
        raw_path: bytes = self._path  # type: ignore[assignment]  # the request line's target, despite Twisted's hint
        path = raw_path.split(b"?", 1)[0]
        try:
            decoded = unquote(path.decode("ascii"))
        except UnicodeDecodeError:
            return None  # daphne answers such a path itself
        limit: int | None = body_limit(decoded, self.factory.server.root_path)
        return limit

    # -- reading ----------------------------------------------------------------------------------

    def dataReceived(self, data: bytes) -> None:
        if self.refused:
            return  # lingering: read and dropped
        if self._deadline is None and not self._handlingRequest:
            timeout = float(mcp_settings.REQUEST_BODY_TIMEOUT)
            call_later: Any = self.callLater
            self._deadline = call_later(timeout, self._too_slow, timeout)
        super().dataReceived(data)

    def lineReceived(self, line: bytes) -> None:
        if not self.refused:
            super().lineReceived(line)

    def rawDataReceived(self, data: bytes) -> None:
        if not self.refused:
            super().rawDataReceived(data)

    def lineLengthExceeded(self, line: bytes) -> None:
        # One line longer than all the headers may be: Twisted would drop the connection without a word.
        self.refuse(431, headers_too_large(self.totalHeadersSize))

    def _respondToBadRequestAndDisconnect(self) -> None:
        if self._receivedHeaderSize > self.totalHeadersSize:
            self.refuse(431, headers_too_large(self.totalHeadersSize))
        else:
            super()._respondToBadRequestAndDisconnect()

    def allContentReceived(self) -> None:
        if self.refused:
            return
        self._cancel_deadline()
        super().allContentReceived()

    def _too_slow(self, timeout: float) -> None:
        self._deadline = None
        self.refuse(408, request_timeout(timeout))

    def _cancel_deadline(self) -> None:
        if self._deadline is not None:
            if self._deadline.active():
                self._deadline.cancel()
            self._deadline = None

    # -- refusing ---------------------------------------------------------------------------------

    def refuse(self, status: int, message: str) -> None:
        """Answer `status` now, stop reading the request, and close once the client stops sending."""
        transport: Any = self.transport
        if self.refused or transport is None:
            return
        self.refused = True
        self._cancel_deadline()
        self.setTimeout(None)
        transport.write(refusal(status, message))
        lose_write = getattr(transport, "loseWriteConnection", None)
        if lose_write is None:
            transport.loseConnection()
            return
        lose_write()  # the answer is sent whole, then end-of-stream; what comes in is dropped meanwhile
        call_later: Any = self.callLater
        self._linger = call_later(LINGER_S, transport.abortConnection)

    def connectionLost(self, reason: Any = None) -> None:
        self._cancel_deadline()
        if self._linger is not None and self._linger.active():
            self._linger.cancel()
        super().connectionLost(reason)


class GuardedHTTPFactory(HTTPFactory):
    """daphne's HTTP factory, building `GuardedChannel`s that make `GuardedRequest`s."""

    def protocol(self) -> Any:
        # Twisted's wrapper, which would switch to HTTP/2 when TLS negotiates it, around our HTTP/1.1 channel.
        return http._GenericHTTPChannelProtocol(GuardedChannel())

    def buildProtocol(self, addr: Any) -> Any:
        protocol = super().buildProtocol(addr)
        protocol.requestFactory = GuardedRequest
        return protocol


class GuardedServer(Server):
    """daphne's server, listening with a `GuardedHTTPFactory`."""

    @property
    def http_factory(self) -> HTTPFactory:
        return self._guarded_factory

    @http_factory.setter
    def http_factory(self, factory: HTTPFactory) -> None:
        # `Server.run()` builds its HTTP factory and listens with it at once; this is where to swap it.
        self._guarded_factory = GuardedHTTPFactory(self)


class GuardedCommandLineInterface(CommandLineInterface):
    """The `daphne` command, serving with a `GuardedServer`."""

    server_class = GuardedServer


def main(argv: list[str] | None = None) -> None:
    """Run daphne with the guards; `argv` as for the `daphne` command (default: `sys.argv[1:]`)."""
    GuardedCommandLineInterface().run(sys.argv[1:] if argv is None else argv)


if __name__ == "__main__":
    main()
