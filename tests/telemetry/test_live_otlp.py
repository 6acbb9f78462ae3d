"""Across processes, under `opentelemetry-instrument`: one trace from the official client through the
example project's gateway and hub to the remote servers they call, exported over OTLP/HTTP.

The example project runs under the zero-code agent (`opentelemetry-distro`, the OTLP/HTTP exporter)
with nothing about telemetry in its settings: the agent finds mcp_django's instrumentor by its entry
point and that installs the telemetry extension, exporting to a receiver in this test. The hub
(`/hub/mcp`) federates `/books/mcp` and the gateway (`/gateway/mcp`) fronts
`/conformance/mcp`, both over loopback HTTP: the remote's SERVER span is a span of a request that came
in over the network, parented only by the `traceparent` the gateway put in `params._meta`.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from opentelemetry.trace import SpanKind

from tests.conftest import serve_example
from tests.live.test_official_client import client
from tests.telemetry.conftest import Telemetry
from tests.telemetry.otlp_receiver import Received, ReceivedSpan, otlp_receiver

pytestmark = pytest.mark.live

WAIT = 30.0
INSTRUMENT = Path(sys.executable).with_name("opentelemetry-instrument")


@pytest.fixture(params=["legacy", "2026-07-28"])
def mode(request: pytest.FixtureRequest) -> str:
    """The official client's mode: the handshake era (2025-11-25) or the stateless revision."""
    return str(request.param)


def agent_env(endpoint: str) -> dict[str, str]:
    """What `opentelemetry-instrument` reads: OTLP/HTTP to `endpoint`, exported within a fraction of a second."""
    return {
        "OTEL_SERVICE_NAME": "mcp-django-example",
        "OTEL_TRACES_EXPORTER": "otlp",
        "OTEL_METRICS_EXPORTER": "otlp",
        "OTEL_LOGS_EXPORTER": "none",
        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
        "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
        "OTEL_BSP_SCHEDULE_DELAY": "100",
        "OTEL_METRIC_EXPORT_INTERVAL": "500",
    }


def chain(received: Received, trace_id: str, outer: str, inner: str) -> list[ReceivedSpan] | None:
    """The front's SERVER span `outer`, its CLIENT span `inner` and the remote's SERVER span `inner`, in
    trace `trace_id`, each the parent of the next; None until all three have arrived."""
    spans = [span for span in received.spans if span.trace_id == trace_id]
    served = [span for span in spans if span.kind == "SERVER" and span.name == outer]
    sent = [span for span in spans if span.kind == "CLIENT" and span.name == inner]
    remote = [span for span in spans if span.kind == "SERVER" and span.name == inner]
    for front in served:
        for call in (span for span in sent if span.parent_id == front.span_id):
            for back in (span for span in remote if span.parent_id == call.span_id):
                return [front, call, back]
    return None


@pytest.mark.skipif(shutil.which(str(INSTRUMENT)) is None, reason="opentelemetry-distro is not installed")
@pytest.mark.parametrize(
    ("path", "outer", "inner", "arguments"),
    [
        ("/hub/mcp", "books_search_books", "search_books", {"query": "django"}),
        ("/gateway/mcp", "test_simple_text", "test_simple_text", {}),
    ],
    ids=["hub", "gateway"],
)
async def test_one_trace_runs_from_the_official_client_through_the_front_to_the_remote_server(
    live_server_env: dict[str, str],
    tmp_path: Path,
    telemetry: Telemetry,
    mode: str,
    path: str,
    outer: str,
    inner: str,
    arguments: dict[str, object],
) -> None:
    with otlp_receiver() as (endpoint, received):
        env = {**live_server_env, **agent_env(endpoint)}
        with serve_example(env, tmp_path, wrapper=[str(INSTRUMENT)]) as server:
            async with client(server, mode, path, user=None) as session:
                result = await session.call_tool(outer, arguments)
            assert not result.is_error, result
            # the official client's own span, `MCP send tools/call {name}`
            (sent,) = [span for span in telemetry.finished() if span.kind is SpanKind.CLIENT and outer in span.name]
            trace_id = f"{sent.context.trace_id:032x}"
            arrived = received.wait_for(
                lambda r: chain(r, trace_id, f"tools/call {outer}", f"tools/call {inner}") is not None, WAIT
            )
            assert arrived, f"{[(s.kind, s.name, s.trace_id == trace_id) for s in received.spans]}\n{server.log_tail()}"
            metrics = {"mcp.server.operation.duration", "mcp.client.operation.duration"}
            assert received.wait_for(lambda r: metrics <= r.metrics, WAIT), received.metrics

    found = chain(received, trace_id, f"tools/call {outer}", f"tools/call {inner}")
    assert found is not None
    front, call, back = found
    assert front.parent_id == f"{sent.context.span_id:016x}"  # the official client's span
    assert {front.service, call.service, back.service} == {"mcp-django-example"}
    version = "2026-07-28" if mode == "2026-07-28" else "2025-11-25"
    assert front.attributes["mcp.protocol.version"] == version
    assert front.attributes["gen_ai.tool.name"] == outer
    assert front.attributes["gen_ai.operation.name"] == "execute_tool"
    assert front.attributes["network.transport"] == "tcp"
    assert call.attributes["gen_ai.tool.name"] == inner
    assert call.attributes["mcp.method.name"] == "tools/call"
    assert call.attributes["server.address"] == "127.0.0.1"
    assert call.attributes["server.port"] == int(server.base_url.rsplit(":", 1)[1])
    assert call.attributes["mcp.protocol.version"] == "2026-07-28"  # the front speaks the newest era to its remote
    assert back.attributes["gen_ai.tool.name"] == inner
    assert back.attributes["jsonrpc.request.id"] == call.attributes["jsonrpc.request.id"]
