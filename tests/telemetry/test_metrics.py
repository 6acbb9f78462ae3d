"""`mcp.server.operation.duration`: a histogram in seconds, with the conventions' low-cardinality attributes."""

from __future__ import annotations

import pytest

from mcp_django.testing import MCPTestClient, assert_mcp_error
from tests.telemetry.conftest import Telemetry
from tests.telemetry.tools import endpoint

OPERATION_DURATION = "mcp.server.operation.duration"


def counts(telemetry: Telemetry) -> dict[frozenset[tuple[str, object]], int]:
    return {frozenset(attributes.items()): count for attributes, count, _ in telemetry.points(OPERATION_DURATION)}


@pytest.mark.django_db
async def test_each_operation_is_one_measurement_under_its_method_tool_and_outcome(telemetry: Telemetry) -> None:
    before = counts(telemetry)
    client = MCPTestClient(endpoint(), era="stateless")
    await client.call_tool("echo", {"text": "a"})
    await client.call_tool("echo", {"text": "b"})
    await client.call_tool("fails")
    with assert_mcp_error(-32602):
        await client.get_prompt("nowhere")

    base = {"mcp.protocol.version": "2026-07-28"}
    tool = {**base, "mcp.method.name": "tools/call", "gen_ai.operation.name": "execute_tool"}
    expected = {
        frozenset({**tool, "gen_ai.tool.name": "echo"}.items()): 2,
        frozenset({**tool, "gen_ai.tool.name": "fails", "error.type": "tool_error"}.items()): 1,
        frozenset(
            {
                **base,
                "mcp.method.name": "prompts/get",
                "gen_ai.prompt.name": "nowhere",
                "error.type": "-32602",
                "rpc.response.status_code": "-32602",
            }.items()
        ): 1,
    }
    after = counts(telemetry)
    assert {key: after[key] - before.get(key, 0) for key in expected} == expected


@pytest.mark.django_db
async def test_the_duration_is_in_seconds_and_no_id_or_uri_becomes_a_metric_attribute(telemetry: Telemetry) -> None:
    client = MCPTestClient(endpoint(), era="handshake")
    await client.read_resource("notes://today")

    points = [(attributes, total) for attributes, _, total in telemetry.points(OPERATION_DURATION)]
    reads = [(attributes, total) for attributes, total in points if attributes["mcp.method.name"] == "resources/read"]
    assert reads
    for attributes, total in reads:
        assert not {"jsonrpc.request.id", "mcp.session.id", "mcp.resource.uri"} & set(attributes)
        assert 0 < total < 5  # seconds, not milliseconds
