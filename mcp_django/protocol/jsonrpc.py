"""JSON-RPC 2.0 envelopes, error codes and the error classes the protocol core raises.

Every error the core can produce is an `MCPError` subclass carrying its JSON-RPC code and
a default message. They are turned into wire dicts in exactly one place, `MCPError.to_response`;
which HTTP status carries one is the HTTP transport's rule (`transports.http.http_status`).
"""

from __future__ import annotations

from typing import Any, Final, TypeAlias

from mcp_types.jsonrpc import (
    HEADER_MISMATCH,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    PARSE_ERROR,
    UNSUPPORTED_PROTOCOL_VERSION,
)

__all__ = [
    "HEADER_MISMATCH",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "MISSING_REQUIRED_CLIENT_CAPABILITY",
    "PARSE_ERROR",
    "RESOURCE_NOT_FOUND_LEGACY",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "HeaderMismatch",
    "InternalError",
    "InvalidParams",
    "InvalidRequest",
    "MCPError",
    "Message",
    "MethodNotFound",
    "MissingClientCapability",
    "ParseError",
    "RequestId",
    "ResourceNotFound",
    "UnsupportedProtocolVersion",
    "is_request",
    "notification",
    "request_id_of",
    "result_response",
]

RESOURCE_NOT_FOUND_LEGACY: Final = -32002
"""Resource not found in the handshake era (2026-07-28 uses -32602 with `data.uri`)."""

RequestId: TypeAlias = "int | str"
Message: TypeAlias = "dict[str, Any]"


class MCPError(Exception):
    """A protocol error that becomes a JSON-RPC error response.

    Subclasses set `code` and `default_message`; instances may override the message
    and attach `data`.
    """

    code: int = INTERNAL_ERROR
    default_message: str = "Internal error"

    def __init__(self, message: str | None = None, *, data: Any = None) -> None:
        self.message = message or self.default_message
        self.data = data
        super().__init__(self.message)

    def to_error(self) -> dict[str, Any]:
        """Return the JSON-RPC `error` member for this exception."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error

    def to_response(self, request_id: RequestId | None) -> Message:
        """Return the full JSON-RPC error response for `request_id`."""
        return {"jsonrpc": "2.0", "id": request_id, "error": self.to_error()}


class ParseError(MCPError):
    code = PARSE_ERROR
    default_message = "Parse error"


class InvalidRequest(MCPError):
    code = INVALID_REQUEST
    default_message = "Invalid request"


class MethodNotFound(MCPError):
    code = METHOD_NOT_FOUND
    default_message = "Method not found"


class InvalidParams(MCPError):
    code = INVALID_PARAMS
    default_message = "Invalid params"


class InternalError(MCPError):
    code = INTERNAL_ERROR
    default_message = "Internal error"


class HeaderMismatch(MCPError):
    code = HEADER_MISMATCH
    default_message = "Header mismatch"


class MissingClientCapability(MCPError):
    code = MISSING_REQUIRED_CLIENT_CAPABILITY
    default_message = "Missing required client capability"


class UnsupportedProtocolVersion(MCPError):
    code = UNSUPPORTED_PROTOCOL_VERSION
    default_message = "Unsupported protocol version"


class ResourceNotFound(MCPError):
    """A resource URI that no registered resource or template serves.

    The wire code depends on the era; the handler rewrites it (see `handler`).
    """

    code = INVALID_PARAMS
    default_message = "Resource not found"

    def __init__(self, uri: str) -> None:
        super().__init__(f"Resource not found: {uri}", data={"uri": uri})
        self.uri = uri


def result_response(request_id: RequestId, result: dict[str, Any]) -> Message:
    """Return a JSON-RPC success response."""
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def notification(method: str, params: dict[str, Any] | None = None) -> Message:
    """Return a JSON-RPC notification."""
    message: Message = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return message


def request_id_of(message: Any) -> RequestId | None:
    """The message's id when it is a valid one: bools are ints to Python, and MCP forbids null ids."""
    request_id = message.get("id") if isinstance(message, dict) else None
    if isinstance(request_id, bool) or not isinstance(request_id, (str, int)):
        return None
    return request_id


def is_request(message: Any) -> bool:
    """True for a JSON object with a method and an id (its validity is the handler's to judge)."""
    return isinstance(message, dict) and "method" in message and "id" in message
