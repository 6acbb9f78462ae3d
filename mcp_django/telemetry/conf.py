"""The `MCP_DJANGO` keys of the telemetry extension (docs/observability.md), read through `telemetry_settings`.

Named on `TelemetryExtension.settings`; their check is the extension's (mcp_django_telemetry.E181).
"""

from __future__ import annotations

from typing import Final

from mcp_django.conf import MCPSettings

telemetry_settings: Final = MCPSettings(
    {
        # Tool arguments and results as span attributes only when opted in, and then redacted with the
        # redaction interceptor's rules (RedactionOptions: patterns, replacement).
        "TELEMETRY_TOOL_CONTENT": False,
        "TELEMETRY_REDACTION": {},
    },
    owner="mcp_django.telemetry",
)
