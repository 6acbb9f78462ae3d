"""The benchmark project's endpoints, all on the echo registry unless said otherwise.

- `anon/mcp`: anonymous, no interceptors (the plain `tools/call` rows);
- `audit/mcp`: a DRF token and the audit sink (the "token + audit" rows);
- `ten/mcp`: anonymous, ten no-op interceptors (compared with `anon/mcp`);
- `many/mcp`: anonymous, adapter mode on a provider of 10,000 tools (`tools/list` pages);
- `otel/mcp`: `anon/mcp` with the telemetry extension (the telemetry rows; the process decides whether an
  OpenTelemetry SDK is configured: `benchmarks.asgi_otel`).
"""

from __future__ import annotations

from benchmarks.tools import TEN_NO_OPS, ManyTools, registry
from mcp_django.urls import endpoint

AUDIT = "mcp_django.interceptors.audit.AuditSinkInterceptor"
TELEMETRY = "mcp_django.telemetry.TelemetryExtension"

urlpatterns = [
    *endpoint("anon/mcp", name="anon", registry=registry, allow_anonymous=True, interceptors=[]),
    *endpoint("audit/mcp", name="audit", registry=registry, interceptors=[AUDIT]),
    *endpoint("ten/mcp", name="ten", registry=registry, allow_anonymous=True, interceptors=TEN_NO_OPS),
    *endpoint(
        "otel/mcp", name="otel", registry=registry, allow_anonymous=True, interceptors=[], extensions=[TELEMETRY]
    ),
    *endpoint("many/mcp", name="many", mode="adapter", providers=[ManyTools()], allow_anonymous=True, interceptors=[]),
]
