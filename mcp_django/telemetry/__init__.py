"""OpenTelemetry traces and metrics for every MCP message, by the MCP semantic conventions.

Install the extension (the package never configures an SDK; docs/observability.md)::

    MCP_DJANGO = {"EXTENSIONS": ["mcp_django.telemetry.TelemetryExtension"]}

The core never imports this package; it plugs in through `Extension.observers`.
"""

from mcp_django.telemetry.extension import TelemetryExtension

__all__ = ["TelemetryExtension"]
