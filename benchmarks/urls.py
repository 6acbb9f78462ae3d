"""The benchmark project's endpoints, all on the echo registry unless said otherwise.

- `anon/mcp`: anonymous, no interceptors (the plain `tools/call` rows);
- `audit/mcp`: a DRF token and the audit sink (the "token + audit" rows);
- `ten/mcp`: anonymous, ten no-op interceptors (compared with `anon/mcp`);
- `many/mcp`: anonymous, adapter mode on a provider of 10,000 tools (`tools/list` pages);
- `otel/mcp`: `anon/mcp` with the telemetry extension (the telemetry rows; the process decides whether an
  OpenTelemetry SDK is configured: `benchmarks.asgi_otel`);
- `stateless/mcp`: `anon/mcp` without handshake sessions (the handshake era served statelessly, as django-mcpz
  serves it);
- `mcpz/mcp`: django-mcpz's server (`benchmarks.mcpz`), when django-mcpz is installed.
"""

from __future__ import annotations

import importlib.util
from typing import Any

from django.urls import path

from benchmarks.tools import TEN_NO_OPS, ManyTools, registry
from mcp_django.urls import endpoint

AUDIT = "mcp_django.interceptors.audit.AuditSinkInterceptor"
TELEMETRY = "mcp_django.telemetry.TelemetryExtension"

urlpatterns: list[Any] = [
    *endpoint("anon/mcp", name="anon", registry=registry, allow_anonymous=True, interceptors=[]),
    *endpoint("audit/mcp", name="audit", registry=registry, interceptors=[AUDIT]),
    *endpoint("ten/mcp", name="ten", registry=registry, allow_anonymous=True, interceptors=TEN_NO_OPS),
    *endpoint(
        "otel/mcp", name="otel", registry=registry, allow_anonymous=True, interceptors=[], extensions=[TELEMETRY]
    ),
    *endpoint("many/mcp", name="many", mode="adapter", providers=[ManyTools()], allow_anonymous=True, interceptors=[]),
    *endpoint(
        "stateless/mcp", name="stateless", registry=registry, allow_anonymous=True, interceptors=[], sessions=False
    ),
]

if importlib.util.find_spec("django_mcpz") is not None:
    from benchmarks.mcpz import server as mcpz_server

    urlpatterns.append(path("mcpz/mcp", mcpz_server))
