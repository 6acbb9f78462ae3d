"""The telemetry extension: served without being advertised, and check E180 when the API is missing."""

from __future__ import annotations

import sys

import pytest

from mcp_django.telemetry import TelemetryExtension
from mcp_django.testing import MCPTestClient
from tests.telemetry.tools import endpoint


@pytest.mark.django_db
async def test_clients_are_not_told_about_telemetry() -> None:
    discovered = await MCPTestClient(endpoint(), era="stateless").request("server/discover")
    assert "mcp-django.dev/telemetry" not in discovered["capabilities"].get("extensions", {})
    initialized = await MCPTestClient(endpoint(), era="handshake").initialize()
    assert "mcp-django.dev/telemetry" not in initialized["capabilities"].get("experimental", {})


def test_without_opentelemetry_api_the_extension_is_check_e180_and_serves_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # As if the otel extra were not installed: importing opentelemetry fails.
    for name in [name for name in sys.modules if name == "opentelemetry" or name.startswith("opentelemetry.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "opentelemetry", None)

    extension = TelemetryExtension()
    assert [(m.id, m.msg, m.hint) for m in extension.check()] == [
        (
            "mcp_django_telemetry.E180",
            "The telemetry extension needs opentelemetry-api, not installed.",
            "Install the otel extra: pip install 'django-mcp-host[otel]'.",
        )
    ]
    assert extension.capability(None) is None


def test_with_opentelemetry_api_the_extension_passes_its_check() -> None:
    assert TelemetryExtension().check() == []


NO_SDK = """
import asyncio, django
django.setup()
from opentelemetry import trace
from mcp_django.testing import MCPTestClient
from tests.telemetry.tools import endpoint, traced

@traced.tool
def trace_id() -> str:
    '''The trace the tool runs in.'''
    return format(trace.get_current_span().get_span_context().trace_id, "032x")

async def main():
    client = MCPTestClient(endpoint(interceptors=[]), era="stateless")  # no audit sink: no database here
    meta = {"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}
    sent = await client.request("tools/call", {"name": "trace_id", "arguments": {}, "_meta": meta})
    alone = await client.call_tool("trace_id")
    print(sent["content"][0]["text"], alone["content"][0]["text"])

asyncio.run(main())
"""


def test_with_no_sdk_configured_the_clients_trace_context_still_reaches_the_tool() -> None:
    """The API alone records nothing, but carries the client's context on (to a gateway's backend, say)."""
    import os
    import subprocess

    from tests.conftest import ROOT

    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "example_project.settings"}
    done = subprocess.run(
        [sys.executable, "-c", NO_SDK], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["4bf92f3577b34da6a3ce929d0e0e4736", "0" * 32]


LATE_SDK = """
import asyncio, django
django.setup()
from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from mcp_django.testing import MCPTestClient
from tests.telemetry.tools import endpoint

async def main():
    client = MCPTestClient(endpoint(interceptors=[]), era="stateless")  # no audit sink: no database here
    await client.call_tool("echo", {"text": "before"})
    spans, reader = InMemorySpanExporter(), InMemoryMetricReader()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    trace.set_tracer_provider(provider)
    metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
    await client.call_tool("echo", {"text": "after"})
    data = reader.get_metrics_data()
    names = [metric.name for r in data.resource_metrics for s in r.scope_metrics for metric in s.metrics]
    print(",".join(span.name for span in spans.get_finished_spans()))
    print("mcp.server.operation.duration" in names)

asyncio.run(main())
"""


def test_providers_set_after_the_first_calls_receive_the_spans_and_metrics_of_the_next() -> None:
    """The extension keeps the API's proxies it got with no SDK; they forward once a project sets one."""
    import os
    import subprocess

    from tests.conftest import ROOT

    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "example_project.settings"}
    done = subprocess.run(
        [sys.executable, "-c", LATE_SDK], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["echo inner,tools/call echo", "True"]


def test_the_instrumentor_opentelemetry_discovers_installs_the_extension_and_an_endpoint_may_leave_it_out() -> None:
    from importlib.metadata import entry_points

    from mcp_django.endpoints import Endpoint
    from mcp_django.extensions import installed_extensions
    from mcp_django.telemetry.instrumentation import MCPDjangoInstrumentor

    (found,) = [point for point in entry_points(group="opentelemetry_instrumentor") if point.name == "mcp_django"]
    assert found.load() is MCPDjangoInstrumentor  # what `opentelemetry-instrument` loads and instruments

    def served(endpoint: Endpoint) -> set[str]:
        return {extension.identifier for extension in endpoint.served_extensions.offered}

    assert "mcp-django.dev/telemetry" not in {extension.identifier for extension in installed_extensions()}
    instrumentor = MCPDjangoInstrumentor()
    instrumentor.instrument()
    try:
        assert "mcp-django.dev/telemetry" in {extension.identifier for extension in installed_extensions()}
        assert "mcp-django.dev/telemetry" in served(Endpoint("otel/on", name="otel-on"))
        off = Endpoint("otel/off", name="otel-off", exclude_extensions=["mcp-django.dev/telemetry"])
        assert "mcp-django.dev/telemetry" not in served(off)
    finally:
        instrumentor.uninstrument()
    assert "mcp-django.dev/telemetry" not in {extension.identifier for extension in installed_extensions()}
