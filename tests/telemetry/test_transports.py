"""Every transport's messages get their span, with `network.transport`; channels get a session duration."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from functools import partial
from typing import Any

import pytest
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.test import override_settings

from mcp_django.asgi import get_asgi_application
from mcp_django.protocol import Connection
from mcp_django.routing import websocket_endpoint
from mcp_django.transports.stdio import serve_stdio
from tests.http_support import stateless
from tests.telemetry.conftest import Telemetry
from tests.telemetry.tools import endpoint
from tests.test_asgi import call, echo_call

pytestmark = pytest.mark.django_db(transaction=True)

ECHO = stateless("tools/call", {"name": "echo", "arguments": {"text": "hi"}})
SESSION_DURATION = "mcp.server.session.duration"


def network(telemetry: Telemetry) -> dict[str, Any]:
    (span,) = telemetry.finished("tools/call")
    assert span.name == "tools/call echo"
    attributes = dict(span.attributes or {})
    return {key: value for key, value in attributes.items() if key.startswith("network.")}


@pytest.fixture
def installed() -> Iterator[None]:
    """The telemetry extension installed for every endpoint, as a project does in its settings."""
    with override_settings(
        MCP_DJANGO={**settings.MCP_DJANGO, "EXTENSIONS": ["mcp_django.telemetry.TelemetryExtension"]}
    ):
        yield


@pytest.mark.urls("tests.asgi_urls")
@pytest.mark.usefixtures("installed")
@pytest.mark.parametrize("path", ["/mcp", "/view/mcp"], ids=["fast path", "django view"])
async def test_an_http_request_is_a_span_over_tcp_and_http(telemetry: Telemetry, path: str) -> None:
    body, headers = echo_call()
    answer = await call(get_asgi_application(), "POST", path, body, headers)

    assert answer.status == 200
    assert network(telemetry) == {"network.transport": "tcp", "network.protocol.name": "http"}


async def test_a_websocket_message_is_a_span_and_the_socket_a_session(telemetry: Telemetry) -> None:
    application = URLRouter(websocket_endpoint("ws/otel", endpoint=endpoint()))
    socket = WebsocketCommunicator(application, "/ws/otel", subprotocols=["mcp"])
    socket.scope["user"] = AnonymousUser()
    accepted, _ = await socket.connect()
    assert accepted
    await socket.send_json_to(ECHO)
    assert (await socket.receive_json_from())["id"] == 1
    await socket.disconnect()

    assert network(telemetry) == {"network.transport": "tcp", "network.protocol.name": "websocket"}
    sessions = [attributes for attributes, count, _ in telemetry.points(SESSION_DURATION) if count]
    assert {"network.transport": "tcp", "network.protocol.name": "websocket"} in sessions


async def test_a_stdio_message_is_a_span_over_a_pipe_and_the_pipe_a_session(telemetry: Telemetry) -> None:
    reader = asyncio.StreamReader()
    written: list[bytes] = []

    async def write(data: bytes) -> None:
        written.append(data)

    served = asyncio.ensure_future(
        serve_stdio(endpoint().handler, Connection(transport="stdio"), partial(reader.read, 4096), write, limit=65536)
    )
    reader.feed_data(json.dumps(ECHO).encode() + b"\n")
    reader.feed_eof()
    await asyncio.wait_for(served, 5)

    assert json.loads(written[0])["id"] == 1
    assert network(telemetry) == {"network.transport": "pipe"}
    assert any(attributes == {"network.transport": "pipe"} for attributes, _, _ in telemetry.points(SESSION_DURATION))
