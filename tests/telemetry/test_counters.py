"""Counters: refusals by reason, audit rows by what became of them, and open channels and streams."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser
from django.core.cache import cache

from mcp_django.client.connection import pool
from mcp_django.endpoints import Endpoint
from mcp_django.interceptors.audit import flush_audit_log
from mcp_django.protocol import Connection, MessageHandler, RequestContext
from mcp_django.registry import Registry
from mcp_django.routing import websocket_endpoint
from mcp_django.scopes import Scope
from mcp_django.sources import Source, ToolComponent
from mcp_django.sources.composite import CompositeBackend
from mcp_django.telemetry import TelemetryExtension
from mcp_django.testing import MCPCallError, MCPTestClient
from tests.telemetry.conftest import Telemetry
from tests.telemetry.tools import endpoint

LIMIT = {"CLASS": "mcp_django.interceptors.limits.RateLimitInterceptor", "OPTIONS": {"calls": 1, "per_seconds": 3600}}
AUDIT = "mcp_django.interceptors.audit.AuditSinkInterceptor"


def summed(telemetry: Telemetry, name: str) -> dict[frozenset[tuple[str, object]], float]:
    """Each data point of the counter `name`, by its attributes."""
    data = telemetry.metrics.get_metrics_data()
    found: dict[frozenset[tuple[str, object]], float] = {}
    for resource in data.resource_metrics if data else ():
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                if metric.name == name:
                    for point in metric.data.data_points:
                        found[frozenset(dict(point.attributes or {}).items())] = point.value  # type: ignore[union-attr]
    return found


def grew(
    before: dict[frozenset[tuple[str, object]], float], after: dict[frozenset[tuple[str, object]], float]
) -> dict[frozenset[tuple[str, object]], float]:
    return {key: value - before.get(key, 0) for key, value in after.items() if value != before.get(key, 0)}


@pytest.fixture
def empty_cache() -> Iterator[Any]:
    cache.clear()
    yield cache
    cache.clear()


@pytest.mark.django_db
async def test_a_call_past_the_rate_limit_counts_as_a_rate_limit_refusal(
    telemetry: Telemetry, empty_cache: Any
) -> None:
    before = summed(telemetry, "mcp_django.refusals")
    client = MCPTestClient(endpoint(interceptors=[LIMIT]), era="stateless")
    await client.call_tool("echo", {"text": "a"})
    refused = await client.call_tool("echo", {"text": "b"})
    assert refused.get("isError") is True

    refusal = {"mcp_django.refusal.reason": "rate_limit", "mcp.method.name": "tools/call"}
    assert grew(before, summed(telemetry, "mcp_django.refusals")) == {frozenset(refusal.items()): 1}


@pytest.mark.django_db
async def test_a_call_an_interceptor_blocks_counts_as_an_interceptor_refusal(telemetry: Telemetry) -> None:
    before = summed(telemetry, "mcp_django.refusals")
    size = {"CLASS": "mcp_django.interceptors.limits.ArgumentSizeInterceptor", "OPTIONS": {"max_bytes": 4}}
    client = MCPTestClient(endpoint(interceptors=[size]), era="stateless")
    await client.call_tool("echo", {"text": "far too long for the limit"})

    refusal = {"mcp_django.refusal.reason": "interceptor", "mcp.method.name": "tools/call"}
    assert grew(before, summed(telemetry, "mcp_django.refusals")) == {frozenset(refusal.items()): 1}


guarded = Registry("telemetry-scopes")


@guarded.tool(scope="TEAM")
async def payroll() -> str:
    """What a team member may see."""
    return "secret"


@guarded.prompt(scope="TEAM")
def appraisal() -> str:
    """What a team member may ask for."""
    return "secret"


def guarded_endpoint() -> Endpoint:
    """Anonymous callers (USER scope) below a TEAM tool and prompt."""
    return Endpoint(
        "otel/scopes/mcp",
        name="otel-scopes",
        mode="server",
        registry=guarded,
        allow_anonymous=True,
        interceptors=[],
        extensions=[TelemetryExtension()],
    )


@pytest.mark.django_db
async def test_a_call_to_a_tool_beyond_the_callers_scope_counts_as_a_scope_refusal_and_answers_as_unknown(
    telemetry: Telemetry,
) -> None:
    client = MCPTestClient(guarded_endpoint(), era="stateless")
    before = summed(telemetry, "mcp_django.refusals")
    with pytest.raises(MCPCallError) as beyond:
        await client.call_tool("payroll")
    with pytest.raises(MCPCallError) as absent:
        await client.call_tool("payrolls")

    # The client cannot tell the two apart: nothing says the tool exists.
    assert (beyond.value.code, beyond.value.message, beyond.value.data) == (
        absent.value.code,
        "Unknown tool: payroll",
        None,
    )
    assert absent.value.message == "Unknown tool: payrolls"
    refusal = {"mcp_django.refusal.reason": "scope", "mcp.method.name": "tools/call"}
    assert grew(before, summed(telemetry, "mcp_django.refusals")) == {frozenset(refusal.items()): 1}


@pytest.mark.django_db
async def test_a_prompt_beyond_the_callers_scope_counts_as_a_scope_refusal(telemetry: Telemetry) -> None:
    client = MCPTestClient(guarded_endpoint(), era="stateless")
    before = summed(telemetry, "mcp_django.refusals")
    with pytest.raises(MCPCallError, match="Unknown prompt: appraisal"):
        await client.request("prompts/get", {"name": "appraisal"})

    refusal = {"mcp_django.refusal.reason": "scope", "mcp.method.name": "prompts/get"}
    assert grew(before, summed(telemetry, "mcp_django.refusals")) == {frozenset(refusal.items()): 1}


class Broken(Source):
    """A TEAM source whose lookups fail (a provider whose database is down, say)."""

    scope = Scope.TEAM

    def capabilities(self) -> dict[str, Any]:
        return {"tools": {}}

    async def get_tool(self, name: str, ctx: RequestContext, scope: Scope) -> ToolComponent | None:
        raise RuntimeError("down")


async def test_a_source_beyond_the_callers_scope_that_fails_still_leaves_the_answer_unknown(
    telemetry: Telemetry,
) -> None:
    TelemetryExtension().telemetry()  # someone listens: the backend looks the name up at SYSTEM scope

    async def user(ctx: RequestContext) -> Scope:
        return Scope.USER

    handler = MessageHandler(CompositeBackend([Broken(), guarded.source()], user), server_info={"name": "t"})
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "payroll", "_meta": meta}}
    before = summed(telemetry, "mcp_django.refusals")

    reply: Any = await handler.handle(message, Connection())

    assert reply["error"]["message"] == "Unknown tool: payroll"
    assert grew(before, summed(telemetry, "mcp_django.refusals")) == {}


@pytest.mark.django_db(transaction=True)
async def test_a_call_through_a_gateway_whose_remote_is_down_counts_as_an_unavailable_refusal(
    telemetry: Telemetry,
) -> None:
    before = summed(telemetry, "mcp_django.refusals")
    gateway = Endpoint(
        "otel/down/mcp",
        name="otel-down",
        backend={"URL": "http://127.0.0.1:9/mcp", "CONNECT_TIMEOUT": 3},
        allow_anonymous=True,
        interceptors=[],
        extensions=[TelemetryExtension()],
    )
    try:
        with pytest.raises(MCPCallError):
            await MCPTestClient(gateway, era="stateless").call_tool("echo", {"text": "a"})
    finally:
        await pool.aclose()

    refusals = grew(before, summed(telemetry, "mcp_django.refusals"))
    assert refusals == {
        frozenset({"mcp_django.refusal.reason": "unavailable", "mcp.method.name": "tools/call"}.items()): 1
    }


@pytest.mark.django_db(transaction=True)
async def test_each_audited_call_counts_its_row_as_committed(telemetry: Telemetry) -> None:
    before = summed(telemetry, "mcp_django.audit.rows")
    client = MCPTestClient(endpoint(interceptors=[AUDIT]), era="stateless")
    await client.call_tool("echo", {"text": "a"})
    await client.call_tool("echo", {"text": "b"})
    await sync_to_async(flush_audit_log)()

    assert grew(before, summed(telemetry, "mcp_django.audit.rows")) == {
        frozenset({"mcp_django.audit.outcome": "committed"}.items()): 2
    }


@pytest.mark.django_db
async def test_an_open_websocket_counts_as_an_active_channel_until_it_closes(telemetry: Telemetry) -> None:
    websocket = frozenset({"network.transport": "tcp", "network.protocol.name": "websocket"}.items())
    before = summed(telemetry, "mcp_django.channels.active").get(websocket, 0)
    application = URLRouter(websocket_endpoint("ws/otel", endpoint=endpoint()))
    socket = WebsocketCommunicator(application, "/ws/otel", subprotocols=["mcp"])
    socket.scope["user"] = AnonymousUser()
    accepted, _ = await socket.connect()
    assert accepted
    await socket.send_json_to({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    await socket.receive_json_from()
    opened = summed(telemetry, "mcp_django.channels.active")[websocket]
    await socket.disconnect()

    assert opened == before + 1
    assert summed(telemetry, "mcp_django.channels.active")[websocket] == before
