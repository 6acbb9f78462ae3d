"""Across processes: the official `mcp` client's trace continues in the example project, served by daphne."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.trace import SpanKind

from tests.conftest import serve_example
from tests.live.test_official_client import client
from tests.telemetry.conftest import Telemetry

pytestmark = pytest.mark.live


@pytest.fixture(params=["legacy", "2026-07-28"])
def mode(request: pytest.FixtureRequest) -> str:
    """The official client's mode: the handshake era (2025-11-25) or the stateless revision."""
    return str(request.param)


def printed_spans(log: Path) -> list[dict[str, Any]]:
    """The spans the example project's console exporter printed (one indented JSON object each)."""
    text, decoder, spans = log.read_text(), json.JSONDecoder(), []
    start = text.find("{\n")
    while start != -1:
        try:
            span, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            end = start + 1
        else:
            if isinstance(span, dict) and "context" in span:
                spans.append(span)
        start = text.find("{\n", end)
    return spans


async def test_a_traceparent_the_official_client_sends_in_meta_becomes_the_server_spans_parent(
    live_server_env: dict[str, str], tmp_path: Path, telemetry: Telemetry, mode: str
) -> None:
    env = {**live_server_env, "MCP_EXAMPLE_OTEL": "console"}
    with serve_example(env, tmp_path) as server:
        async with client(server, mode) as session:
            await session.call_tool("search_books", {"query": "django"})

    (sent,) = [span for span in telemetry.finished() if span.kind is SpanKind.CLIENT and "tools/call" in span.name]
    served = [span for span in printed_spans(server.log_path) if span["name"] == "tools/call search_books"]
    assert len(served) == 1, server.log_tail()
    assert served[0]["kind"] == "SpanKind.SERVER"
    assert served[0]["context"]["trace_id"] == f"0x{sent.context.trace_id:032x}"
    assert served[0]["parent_id"] == f"0x{sent.context.span_id:016x}"
    assert served[0]["attributes"]["gen_ai.tool.name"] == "search_books"
    assert served[0]["attributes"]["network.transport"] == "tcp"
