"""OpenTelemetry traces and metrics for every MCP message, by the MCP semantic conventions.

Install the extension (the package never configures an SDK; docs/observability.md)::

    MCP_DJANGO = {"EXTENSIONS": ["mcp_django.telemetry.TelemetryExtension"]}

`CallLogExtension` (no OpenTelemetry needed) writes one record per tool call on the `mcp_django.calls`
logger. The core never imports this package; it plugs in through `Extension.observers` and
`Extension.client_observers`.
"""

from mcp_django.telemetry.calls import CALL_FIELDS, CallLogExtension
from mcp_django.telemetry.extension import TelemetryExtension

__all__ = ["CALL_FIELDS", "CallLogExtension", "TelemetryExtension"]
