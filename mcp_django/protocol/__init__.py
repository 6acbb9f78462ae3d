"""The MCP protocol core: JSON-RPC and MCP on plain dicts, with no Django in sight.

Transports hand `MessageHandler` a parsed message and a `Connection`; a `Backend`
serves the tools, resources and prompts.
"""

from mcp_django.protocol.backend import Backend
from mcp_django.protocol.context import LOG_LEVELS, Connection, RequestContext, SessionState
from mcp_django.protocol.handler import MessageHandler
from mcp_django.protocol.hooks import CallNext, OperationHook
from mcp_django.protocol.jsonrpc import (
    HeaderMismatch,
    InternalError,
    InvalidParams,
    InvalidRequest,
    MCPError,
    MethodNotFound,
    MissingClientCapability,
    ParseError,
    ResourceNotFound,
    UnsupportedProtocolVersion,
    URLElicitationRequired,
)
from mcp_django.protocol.versions import Era, era_of_header

__all__ = [
    "LOG_LEVELS",
    "Backend",
    "CallNext",
    "Connection",
    "Era",
    "HeaderMismatch",
    "InternalError",
    "InvalidParams",
    "InvalidRequest",
    "MCPError",
    "MessageHandler",
    "MethodNotFound",
    "MissingClientCapability",
    "OperationHook",
    "ParseError",
    "RequestContext",
    "ResourceNotFound",
    "SessionState",
    "URLElicitationRequired",
    "UnsupportedProtocolVersion",
    "era_of_header",
]
