"""A CLIENT span for every request sent to a remote MCP server: a gateway's, a hub's, `MCPClient`'s.

The remote is the official SDK's server under uvicorn (`sdk_backend_url`); the gateway is served in
process, so the spans of both sides of this process are in the in-memory exporter.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlsplit

import pytest
from opentelemetry import trace
from opentelemetry.trace import SpanKind, StatusCode

from mcp_django.client import MCPClient
from mcp_django.client.connection import pool
from mcp_django.endpoints import Endpoint
from mcp_django.exceptions import BackendUnavailable, RemoteError
from mcp_django.telemetry import TelemetryExtension
from mcp_django.testing import MCPTestClient
from tests.telemetry.conftest import Telemetry
from tests.telemetry.tools import traced

pytestmark = [pytest.mark.live, pytest.mark.django_db(transaction=True)]

tracer = trace.get_tracer("tests.telemetry.client")


@pytest.fixture(autouse=True)
def _installed(settings: Any) -> None:
    """The extension installed for the process (client spans are the process's, not an endpoint's)."""
    settings.MCP_DJANGO = {
        **settings.MCP_DJANGO,
        "EXTENSIONS": [*settings.MCP_DJANGO.get("EXTENSIONS", []), "mcp_django.telemetry.TelemetryExtension"],
    }


@pytest.fixture(autouse=True)
async def _close_the_pool() -> AsyncIterator[None]:
    yield
    await pool.aclose()


def client_spans(telemetry: Telemetry, prefix: str = "") -> list[Any]:
    return [span for span in telemetry.finished(prefix) if span.kind is SpanKind.CLIENT]


async def test_an_mcpclient_call_is_a_client_span_under_the_current_one_with_the_conventions_attributes(
    telemetry: Telemetry, sdk_backend_url: str
) -> None:
    with tracer.start_as_current_span("a view") as view:
        result = await MCPClient({"URL": sdk_backend_url}, interceptors=[]).call_tool("echo", {"text": "hi"})
    assert result["content"][0]["text"] == "hi"

    (call,) = client_spans(telemetry, "tools/call")
    url = urlsplit(sdk_backend_url)
    assert call.name == "tools/call echo"
    assert call.parent is not None
    assert call.parent.span_id == view.get_span_context().span_id
    attributes = dict(call.attributes or {})
    assert attributes.pop("jsonrpc.request.id").isdigit()
    assert attributes == {
        "mcp.method.name": "tools/call",
        "gen_ai.tool.name": "echo",
        "gen_ai.operation.name": "execute_tool",
        "mcp.protocol.version": attributes["mcp.protocol.version"],
        "network.transport": "tcp",
        "network.protocol.name": "http",
        "server.address": url.hostname,
        "server.port": url.port,
    } | ({"mcp.session.id": attributes["mcp.session.id"]} if "mcp.session.id" in attributes else {})
    # the handshake the first request made is a client span of its own, in the same trace
    (opening,) = client_spans(telemetry, "server/discover") or client_spans(telemetry, "initialize")
    assert opening.context.trace_id == view.get_span_context().trace_id
    (point,) = [p for p in telemetry.points("mcp.client.operation.duration") if p[0].get("gen_ai.tool.name") == "echo"]
    assert point[0]["server.port"] == url.port
    assert "jsonrpc.request.id" not in point[0]


def front(kind: str, backend: dict[str, Any]) -> Endpoint:
    """A gateway to `backend`, or a hub serving the telemetry tests' registry and `backend` as `sdk_*`."""
    options: dict[str, Any] = {"allow_anonymous": True, "interceptors": [], "extensions": [TelemetryExtension()]}
    if kind == "gateway":
        return Endpoint("otel/gw/mcp", name="otel-gw", backend=backend, **options)
    servers = [{"SERVER": backend, "NAMESPACE": "sdk"}]
    return Endpoint("otel/hub/mcp", name="otel-hub", mode="server", registry=traced, servers=servers, **options)


@pytest.mark.parametrize("kind", ["gateway", "hub"])
async def test_a_call_through_a_gateway_or_a_hub_has_a_client_span_for_the_remote_request_under_its_server_span(
    telemetry: Telemetry, sdk_backend_url: str, kind: str
) -> None:
    endpoint = front(kind, {"URL": sdk_backend_url, "PROTOCOL_VERSION": "2025-11-25"})
    name = "echo" if kind == "gateway" else "sdk_echo"
    result = await MCPTestClient(endpoint, era="stateless").call_tool(name, {"text": "through"})
    assert result["content"][0]["text"] == "through"

    (served,) = [span for span in telemetry.finished("tools/call") if span.kind is SpanKind.SERVER]
    (sent,) = client_spans(telemetry, "tools/call")
    assert served.name == f"tools/call {name}"
    assert sent.name == "tools/call echo"  # the remote's own name for it
    assert sent.parent is not None
    assert sent.parent.span_id == served.context.span_id
    assert sent.context.trace_id == served.context.trace_id
    assert sent.attributes is not None
    assert sent.attributes["mcp.protocol.version"] == "2025-11-25"
    assert sent.attributes["mcp.session.id"]  # the handshake-era backend gave the gateway a session


async def test_a_remote_error_and_an_unreachable_server_mark_the_client_span_as_failed(
    telemetry: Telemetry, sdk_backend_url: str
) -> None:
    client = MCPClient({"URL": sdk_backend_url}, interceptors=[])
    with pytest.raises(RemoteError):
        await client.get_prompt("no-such-prompt")
    with pytest.raises(BackendUnavailable):
        await MCPClient({"URL": "http://127.0.0.1:9/mcp", "CONNECT_TIMEOUT": 3}, interceptors=[]).list_tools()

    (refused,) = client_spans(telemetry, "prompts/get")
    assert refused.name == "prompts/get no-such-prompt"
    assert refused.status.status_code is StatusCode.ERROR
    assert refused.attributes is not None
    code = refused.attributes["rpc.response.status_code"]
    assert refused.attributes["error.type"] == code
    assert str(code).lstrip("-").isdigit()
    (down,) = [span for span in client_spans(telemetry) if span.attributes and span.attributes.get("server.port") == 9]
    assert down.name == "server/discover"  # the opening request is where it fails
    assert down.attributes is not None
    assert down.attributes["error.type"] == "unreachable"


async def test_without_the_extension_installed_no_client_span_is_made(
    telemetry: Telemetry, sdk_backend_url: str, settings: Any
) -> None:
    settings.MCP_DJANGO = {**settings.MCP_DJANGO, "EXTENSIONS": []}
    await MCPClient({"URL": sdk_backend_url}, interceptors=[]).call_tool("echo", {"text": "hi"})

    assert client_spans(telemetry) == []
