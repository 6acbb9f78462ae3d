"""OpenTelemetry for the example project, off by default (docs/observability.md).

`MCP_EXAMPLE_OTEL=console` installs mcp_django's telemetry extension and an SDK that prints every span
to standard output as it ends (needs `opentelemetry-sdk`); `MCP_EXAMPLE_OTEL=api` installs the extension
alone, for `opentelemetry-instrument` (or your own providers) to configure the SDK.
"""

from __future__ import annotations

import os

MODE = os.environ.get("MCP_EXAMPLE_OTEL", "").strip().lower()

EXTENSIONS = ["mcp_django.telemetry.TelemetryExtension"] if MODE in ("console", "api") else []
"""What the example project adds to `MCP_DJANGO["EXTENSIONS"]`."""


def configure() -> None:
    """Set the console SDK when `MCP_EXAMPLE_OTEL=console`: a project's job, never the package's."""
    if MODE != "console":
        return
    from opentelemetry import trace
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor

    provider = TracerProvider(resource=Resource.create({"service.name": "mcp-django-example"}))
    provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter()))
    trace.set_tracer_provider(provider)
