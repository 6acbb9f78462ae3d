"""`MCPDjangoInstrumentor`: telemetry switched on by OpenTelemetry's own discovery, with no setting.

OpenTelemetry's convention for a library is an instrumentor the agent finds by its
`opentelemetry_instrumentor` entry point (Django's, psycopg's and httpx's instrumentation work so).
The package declares one, so `opentelemetry-instrument daphne mysite.asgi:application` installs the
`TelemetryExtension` on every endpoint with nothing in `MCP_DJANGO["EXTENSIONS"]`. A project that sets
up its SDK in code calls it itself, as it does the others::

    from mcp_django.telemetry.instrumentation import MCPDjangoInstrumentor

    MCPDjangoInstrumentor().instrument()

An endpoint leaves it out like any installed extension (its excluded identifiers,
`"mcp-django.dev/telemetry"`); `OTEL_PYTHON_DISABLED_INSTRUMENTATIONS=mcp_django` keeps the agent from
installing it at all. docs/observability.md.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, Final

from opentelemetry.instrumentation.instrumentor import BaseInstrumentor  # type: ignore[attr-defined]  # not in __all__

EXTENSION: Final = "mcp_django.telemetry.TelemetryExtension"


class MCPDjangoInstrumentor(BaseInstrumentor):
    """Installs mcp_django's `TelemetryExtension` as if `MCP_DJANGO["EXTENSIONS"]` named it."""

    def instrumentation_dependencies(self) -> Collection[str]:
        return ("django >= 5.2",)

    def _instrument(self, **kwargs: Any) -> None:
        from mcp_django.extensions import discover

        discover(EXTENSION)

    def _uninstrument(self, **kwargs: Any) -> None:
        from mcp_django.extensions import undiscover

        undiscover(EXTENSION)
