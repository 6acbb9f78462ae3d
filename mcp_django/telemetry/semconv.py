"""The names the OpenTelemetry MCP semantic conventions give (`docs/gen-ai/mcp.md`, status Development)."""

from __future__ import annotations

from typing import Final

METHOD_NAME: Final = "mcp.method.name"
PROTOCOL_VERSION: Final = "mcp.protocol.version"
SESSION_ID: Final = "mcp.session.id"
RESOURCE_URI: Final = "mcp.resource.uri"
REQUEST_ID: Final = "jsonrpc.request.id"
STATUS_CODE: Final = "rpc.response.status_code"
ERROR_TYPE: Final = "error.type"
OPERATION_NAME: Final = "gen_ai.operation.name"
TOOL_NAME: Final = "gen_ai.tool.name"
PROMPT_NAME: Final = "gen_ai.prompt.name"
NETWORK_TRANSPORT: Final = "network.transport"
NETWORK_PROTOCOL: Final = "network.protocol.name"
SERVER_ADDRESS: Final = "server.address"
SERVER_PORT: Final = "server.port"

EXECUTE_TOOL: Final = "execute_tool"
TOOL_ERROR: Final = "tool_error"
CANCELLED: Final = "cancelled"
TIMEOUT: Final = "timeout"

OPERATION_DURATION: Final = "mcp.server.operation.duration"
SESSION_DURATION: Final = "mcp.server.session.duration"
CLIENT_OPERATION_DURATION: Final = "mcp.client.operation.duration"

# The convention has no names for these: the package's own, under its namespace.
REFUSALS: Final = "mcp_django.refusals"
REFUSAL_REASON: Final = "mcp_django.refusal.reason"
AUDIT_ROWS: Final = "mcp_django.audit.rows"
AUDIT_OUTCOME: Final = "mcp_django.audit.outcome"
ACTIVE_CHANNELS: Final = "mcp_django.channels.active"
ACTIVE_STREAMS: Final = "mcp_django.streams.active"
DURATION_BUCKETS: Final = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
"""The explicit bucket boundaries the convention gives both histograms, in seconds."""

METRIC_ATTRIBUTES: Final = frozenset(
    {
        METHOD_NAME,
        ERROR_TYPE,
        TOOL_NAME,
        PROMPT_NAME,
        STATUS_CODE,
        OPERATION_NAME,
        PROTOCOL_VERSION,
        NETWORK_TRANSPORT,
        NETWORK_PROTOCOL,
    }
)
"""The span attributes `mcp.server.operation.duration` carries too (low cardinality: no ids, no URIs)."""

CLIENT_METRIC_ATTRIBUTES: Final = METRIC_ATTRIBUTES | {SERVER_ADDRESS, SERVER_PORT}
"""What `mcp.client.operation.duration` carries: the server's attributes, and where it is."""

TRANSPORTS: Final = {"http": ("tcp", "http"), "websocket": ("tcp", "websocket"), "stdio": ("pipe", None)}
"""`Connection.transport` -> (`network.transport`, `network.protocol.name`); other transports (in memory,
a task worker) set neither."""

HTTP_ATTRIBUTES: Final = {NETWORK_TRANSPORT: "tcp", NETWORK_PROTOCOL: "http"}
"""`network.*` of Streamable HTTP, on both sides."""

TARGETS: Final = {"tools/call": TOOL_NAME, "prompts/get": PROMPT_NAME}
"""Methods whose span name ends with a low-cardinality target: the attribute carrying it."""

RESOURCE_METHODS: Final = frozenset({"resources/read", "resources/subscribe", "resources/unsubscribe"})
"""Methods whose `params.uri` is `mcp.resource.uri` (never in the span name: URIs are high cardinality)."""
