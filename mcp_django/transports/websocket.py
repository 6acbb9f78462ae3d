"""WebSocket: MCP over one socket, one JSON-RPC message per text frame (subprotocol `mcp`).

`MCPWebSocketConsumer` is a Channels consumer serving one endpoint. Mount it with
`mcp_django.routing.websocket_endpoint` under Channels' `AuthMiddlewareStack`, beside the HTTP routes.

- The client must offer the `mcp` subprotocol; a handshake without it is refused, as is one with a
  `Host` that `ALLOWED_HOSTS` does not admit or from a browser `Origin` that
  `MCP_DJANGO["ALLOWED_ORIGINS"]` does not admit (the same rules as HTTP). A caller known by its
  session cookie must moreover come from the site's own origin or one of `CSRF_TRUSTED_ORIGINS`, as
  Django's CSRF protection requires of it over HTTP.
- The caller is found by the endpoint's authentication classes in the handshake's headers (a bearer
  token), else it is the socket's `scope["user"]` (the session cookie); an endpoint without
  `allow_anonymous` refuses the handshake of an anonymous caller.
- The socket keeps one `Connection`: an `initialize` opens a handshake session that lives in memory
  until the socket closes; messages carrying 2026-07-28 `_meta` are served statelessly.
- Requests run concurrently; the notifications a request emits are sent as frames before its response.
- Text that is not JSON gets a `-32700` error frame, a binary frame or one over `MAX_REQUEST_BYTES`
  a `-32600` one; the socket stays open.
- Server-initiated notifications arrive through the endpoint's Channels group (`mcp_django.runtime.notifications`).
"""

from __future__ import annotations

import logging
from typing import Any, Final

from channels.generic.websocket import AsyncWebsocketConsumer

from mcp_django.conf import django_http_settings, mcp_settings
from mcp_django.endpoints import Endpoint, get_endpoint
from mcp_django.endpoints.admission import Credentials, Refused
from mcp_django.protocol import InvalidRequest
from mcp_django.runtime import notifications
from mcp_django.transports.duplex import DuplexTransport, too_large

logger = logging.getLogger("mcp_django.transports.websocket")

SUBPROTOCOL: Final = "mcp"
"""The WebSocket subprotocol MCP clients offer (`Sec-WebSocket-Protocol: mcp`)."""


class MCPWebSocketConsumer(AsyncWebsocketConsumer):
    """Serves one MCP endpoint over a WebSocket.

    Args:
        endpoint: the `Endpoint` to serve, or its name (or path), looked up in the root URLconf on
            the first connection.
    """

    def __init__(self, *args: Any, endpoint: Endpoint | str = "server", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.endpoint_ref = endpoint
        self.transport: DuplexTransport | None = None
        self.group: str | None = None

    async def connect(self) -> None:
        """Accept the socket with subprotocol `mcp`, or refuse it (the client sees HTTP 403)."""
        if SUBPROTOCOL not in self.scope.get("subprotocols", ()):
            logger.info("Refused a WebSocket that did not offer the %r subprotocol", SUBPROTOCOL)
            await self.close()
            return
        try:
            endpoint = self.endpoint_ref if isinstance(self.endpoint_ref, Endpoint) else get_endpoint(self.endpoint_ref)
        except LookupError:
            logger.exception("Refused a WebSocket: its endpoint is not mounted")
            await self.close()
            return
        raw_headers = self.scope.get("headers", ())
        headers = {key.decode("latin-1").lower(): value.decode("latin-1") for key, value in raw_headers}
        proxy_ssl_header = django_http_settings().proxy_ssl_header
        secure = self.scope.get("scheme") == "wss" or (
            proxy_ssl_header is not None and headers.get(proxy_ssl_header[0]) == proxy_ssl_header[1]
        )
        try:
            admission = await endpoint.admit(
                host=headers.get("host"),
                origin=headers.get("origin"),
                credentials=Credentials(headers, user=self.scope.get("user"), secure=secure),
            )
        except Refused as refusal:
            logger.info("Refused a WebSocket on %r: %s", endpoint, refusal.message)
            await self.close()
            return
        host = headers.get("host")
        site = f"{'https' if secure else 'http'}://{host}/" if host else None
        connection = endpoint.connection(admission.principal, transport="websocket", site=site)
        refresh = endpoint.overlay.refresh
        self.transport = DuplexTransport(endpoint.handler, connection, self._send_frame, refresh=refresh)
        if self.channel_layer is not None:
            self.group = notifications.group_name(endpoint)
            await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept(subprotocol=SUBPROTOCOL)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """Serve one frame; requests are answered from tasks of their own."""
        assert self.transport is not None
        if text_data is None:
            await self.transport.send(
                InvalidRequest("Invalid request: send JSON-RPC messages as text frames").to_response(None)
            )
            return
        data = text_data.encode("utf-8", "surrogatepass")
        limit = int(mcp_settings.MAX_REQUEST_BYTES)
        if len(data) > limit:
            await self.transport.send(too_large(limit))
            return
        await self.transport.receive_text(data)

    async def disconnect(self, code: int) -> None:
        """Stop every request in flight: nobody is left to answer."""
        if self.group is not None:
            await self.channel_layer.group_discard(self.group, self.channel_name)
        if self.transport is not None:
            await self.transport.aclose()

    async def mcp_notification(self, event: dict[str, Any]) -> None:
        """Forward a notification sent to the endpoint's group (`mcp_django.runtime.notifications`)."""
        if self.transport is not None:
            await self.transport.push(event["message"])

    async def _send_frame(self, data: bytes) -> None:
        await self.send(text_data=data.decode("ascii"))
