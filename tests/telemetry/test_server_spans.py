"""A SERVER span for every MCP message, named and described by the OpenTelemetry MCP conventions."""

from __future__ import annotations

import asyncio

import pytest
from opentelemetry import trace
from opentelemetry.trace import SpanKind, StatusCode

from mcp_django.runtime.executor import dedicated_threads
from mcp_django.testing import MCPTestClient, assert_mcp_error
from tests.telemetry.conftest import Telemetry
from tests.telemetry.tools import endpoint, started

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"
TRACEPARENT = f"00-{TRACE_ID}-{PARENT_ID}-01"


@pytest.mark.django_db
async def test_a_tool_call_is_a_server_span_named_after_the_tool_with_the_conventions_attributes(
    telemetry: Telemetry,
) -> None:
    client = MCPTestClient(endpoint(), era="handshake")
    await client.call_tool("echo", {"text": "hi"})

    (span,) = telemetry.finished("tools/call")
    assert span.name == "tools/call echo"
    assert span.kind is SpanKind.SERVER
    assert span.instrumentation_scope is not None
    assert span.instrumentation_scope.name == "mcp_django"
    attributes = dict(span.attributes or {})
    assert attributes == {
        "mcp.method.name": "tools/call",
        "gen_ai.tool.name": "echo",
        "gen_ai.operation.name": "execute_tool",
        "mcp.protocol.version": "2025-11-25",
        "jsonrpc.request.id": "2",
    }
    assert span.status.status_code is StatusCode.UNSET
    initialize = telemetry.finished("initialize")[0]
    assert initialize.name == "initialize"
    assert initialize.attributes is not None
    assert initialize.attributes["mcp.protocol.version"] == "2025-11-25"
    assert [span.name for span in telemetry.finished("notifications/")] == ["notifications/initialized"]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("dedicated", [False, True], ids=["sync_to_async", "database threads"])
async def test_a_span_made_inside_a_sync_tool_on_the_database_threads_is_a_child_of_the_call_span(
    telemetry: Telemetry, dedicated: bool
) -> None:
    client = MCPTestClient(endpoint(), era="stateless")
    with dedicated_threads(dedicated):
        result = await client.call_tool("lookup", {"name": "nobody"})
    assert result["content"][0]["text"] == "nobody: 0"

    (call,) = telemetry.finished("tools/call")
    (inner,) = telemetry.finished("lookup query")
    assert inner.parent is not None
    assert inner.parent.span_id == call.context.span_id
    assert inner.context.trace_id == call.context.trace_id


@pytest.mark.django_db
async def test_the_traceparent_in_params_meta_is_the_parent_and_the_ambient_span_is_linked(
    telemetry: Telemetry,
) -> None:
    client = MCPTestClient(endpoint(), era="stateless")
    meta = {"traceparent": TRACEPARENT, "tracestate": "rojo=00f067aa0ba902b7", "baggage": "tenant=acme"}
    with trace.get_tracer("tests").start_as_current_span("http request") as ambient:
        await client.request("tools/call", {"name": "echo", "arguments": {"text": "hi"}, "_meta": meta})

    (span,) = telemetry.finished("tools/call")
    assert span.parent is not None
    assert span.parent.is_remote
    assert f"{span.context.trace_id:032x}" == TRACE_ID
    assert f"{span.parent.span_id:016x}" == PARENT_ID
    assert span.parent.trace_state.get("rojo") == "00f067aa0ba902b7"
    assert [link.context.span_id for link in span.links] == [ambient.get_span_context().span_id]
    assert span.attributes is not None
    assert span.attributes["mcp.protocol.version"] == "2026-07-28"


@pytest.mark.django_db
async def test_without_a_traceparent_the_ambient_span_is_the_parent_and_nothing_is_linked(
    telemetry: Telemetry,
) -> None:
    client = MCPTestClient(endpoint(), era="stateless")
    with trace.get_tracer("tests").start_as_current_span("http request") as ambient:
        await client.call_tool("echo", {"text": "hi"})

    (span,) = telemetry.finished("tools/call")
    assert span.parent is not None
    assert span.parent.span_id == ambient.get_span_context().span_id
    assert span.links == ()
    (inner,) = telemetry.finished("echo inner")
    assert inner.parent is not None
    assert inner.parent.span_id == span.context.span_id


@pytest.mark.django_db
async def test_an_is_error_result_is_a_tool_error(telemetry: Telemetry) -> None:
    client = MCPTestClient(endpoint(), era="stateless")
    result = await client.call_tool("fails")
    assert result["isError"] is True

    (span,) = telemetry.finished("tools/call")
    assert span.attributes is not None
    assert span.attributes["error.type"] == "tool_error"
    assert "rpc.response.status_code" not in span.attributes
    assert span.status.status_code is StatusCode.ERROR


@pytest.mark.django_db
async def test_a_json_rpc_error_sets_error_type_and_status_code_to_its_code(telemetry: Telemetry) -> None:
    client = MCPTestClient(endpoint(), era="stateless")
    with assert_mcp_error(-32602):
        await client.request("prompts/get", {"name": "nowhere"})

    (span,) = telemetry.finished("prompts/get")
    assert span.name == "prompts/get nowhere"
    assert span.attributes is not None
    assert span.attributes["error.type"] == "-32602"
    assert span.attributes["rpc.response.status_code"] == "-32602"
    assert span.status.status_code is StatusCode.ERROR
    assert span.status.description is not None
    assert "nowhere" in span.status.description


@pytest.mark.django_db
async def test_a_prompt_and_a_resource_carry_their_name_and_uri(telemetry: Telemetry) -> None:
    client = MCPTestClient(endpoint(), era="stateless")
    await client.get_prompt("greet", {"who": "Ada"})
    await client.read_resource("notes://today")

    (prompt,) = telemetry.finished("prompts/get")
    assert prompt.name == "prompts/get greet"
    assert prompt.attributes is not None
    assert prompt.attributes["gen_ai.prompt.name"] == "greet"
    assert "gen_ai.operation.name" not in prompt.attributes
    (read,) = telemetry.finished("resources/read")
    assert read.name == "resources/read"  # never the URI: span names stay low-cardinality
    assert read.attributes is not None
    assert read.attributes["mcp.resource.uri"] == "notes://today"


@pytest.mark.django_db
async def test_a_cancelled_call_ends_its_span_as_cancelled(telemetry: Telemetry) -> None:
    client = MCPTestClient(endpoint(), era="stateless")
    started["sleeps"] = asyncio.Event()
    call = asyncio.ensure_future(client.call_tool("sleeps"))
    await asyncio.wait_for(started["sleeps"].wait(), 5)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call

    (span,) = telemetry.finished("tools/call")
    assert span.attributes is not None
    assert span.attributes["error.type"] == "cancelled"
    assert span.status.status_code is StatusCode.ERROR


@pytest.mark.django_db
async def test_an_endpoint_without_the_extension_emits_no_span(telemetry: Telemetry) -> None:
    from mcp_django.endpoints import Endpoint
    from tests.telemetry.tools import traced

    plain = Endpoint("plain/mcp", name="plain", mode="server", registry=traced, allow_anonymous=True, extensions=[])
    await MCPTestClient(plain, era="stateless").call_tool("echo", {"text": "hi"})
    assert telemetry.finished("tools/call") == []
    assert [span.name for span in telemetry.finished()] == ["echo inner"]


@pytest.mark.django_db
async def test_each_interceptor_that_runs_is_a_child_span_with_its_type_phase_and_verdict(
    telemetry: Telemetry,
) -> None:
    chain = [
        "mcp_django.interceptors.redaction.RedactionInterceptor",
        {"CLASS": "tests.interceptors.support.Sink", "OPTIONS": {"tag": "seen"}},
    ]
    client = MCPTestClient(endpoint(interceptors=chain), era="stateless")
    await client.call_tool("echo", {"text": "mail me at ada@example.com"})

    (call,) = telemetry.finished("tools/call")
    children = [span for span in telemetry.finished("interceptor ") if span.parent is not None]
    assert {span.parent.span_id for span in children if span.parent} == {call.context.span_id}
    seen = {
        (
            str((span.attributes or {})["mcp_django.interceptor.name"]),
            (span.attributes or {})["mcp_django.interceptor.phase"],
            (span.attributes or {})["mcp_django.interceptor.verdict"],
        )
        for span in children
    }
    names = {name for name, _, _ in seen}
    assert len(names) == 2
    assert any(phase == "request" and verdict == "modified" for _, phase, verdict in seen)  # the e-mail redacted
    assert any(phase == "response" and verdict == "recorded" for _, phase, verdict in seen)  # the sink
    for span in children:
        assert span.start_time is not None
        assert span.end_time is not None
        assert call.start_time is not None
        assert call.end_time is not None
        assert call.start_time <= span.start_time <= span.end_time <= call.end_time


@pytest.mark.django_db
async def test_a_request_the_server_sends_the_client_is_a_client_span_whose_context_the_client_receives(
    telemetry: Telemetry,
) -> None:
    received: list[dict[str, object]] = []

    def on_input(method: str, params: dict[str, object]) -> dict[str, object]:
        received.append(params)
        return {"action": "accept", "content": {"name": "Ada"}}

    client = MCPTestClient(endpoint(), era="handshake", on_input=on_input)
    result = await client.call_tool("asks")
    assert result["content"][0]["text"] == "Hello Ada"

    (call,) = telemetry.finished("tools/call")
    (asked,) = telemetry.finished("elicitation/create")
    assert asked.kind is SpanKind.CLIENT
    assert asked.parent is not None
    assert asked.parent.span_id == call.context.span_id
    meta = received[0]["_meta"]
    assert isinstance(meta, dict)
    version, trace_id, span_id, _flags = str(meta["traceparent"]).split("-")
    assert (version, trace_id, span_id) == ("00", f"{asked.context.trace_id:032x}", f"{asked.context.span_id:016x}")
