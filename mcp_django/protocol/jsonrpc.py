"""JSON-RPC 2.0 envelopes, error codes and the error classes the protocol core raises.

Every error the core can produce is an `MCPError` subclass carrying its JSON-RPC code and
a default message. They are turned into wire dicts in exactly one place, `MCPError.to_response`;
which HTTP status carries one is the HTTP transport's rule (`transports.http.http_status`).

`parse_json` and `dump_json` are the one JSON codec of every transport: strict UTF-8 JSON in,
compact ASCII JSON out. `orjson` does the common case; the standard library decides every case
where the two could differ, so what is accepted, refused and written stays the standard library's.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final, TypeAlias

import orjson

# The codes of JSON-RPC 2.0 and MCP, as mcp-types' `jsonrpc` module names them, spelled here so that
# naming them does not load the wire types (`wire.py`); tests/protocol/test_wire.py holds them equal.
PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603
CONNECTION_CLOSED: Final = -32000
REQUEST_TIMEOUT: Final = -32001
HEADER_MISMATCH: Final = -32020
MISSING_REQUIRED_CLIENT_CAPABILITY: Final = -32021
UNSUPPORTED_PROTOCOL_VERSION: Final = -32022
URL_ELICITATION_REQUIRED: Final = -32042

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


class URLElicitationRequired(MCPError):
    """The request cannot go on until the user completes URL-mode elicitations (2025-11-25 only).

    `data.elicitations` lists them, each `{"mode": "url", "elicitationId", "url", "message"}`; the client
    sends the user to each URL and may then retry the request.
    """

    code = URL_ELICITATION_REQUIRED
    default_message = "This request requires more information."

    def __init__(self, elicitations: list[dict[str, Any]], message: str | None = None) -> None:
        super().__init__(message, data={"elicitations": elicitations})


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


# -- the JSON codec ---------------------------------------------------------------------------------

_FAST_BRACKETS: Final = 256
"""Bodies with at most this many `[` and `{` go to orjson: nested no deeper, so the standard library would
not have run out of stack on them either (orjson's own limit is 1024, Python's about 1000 frames)."""
_DIGITS: Final = b"0123456789"
_LONG_NUMBER: Final = re.compile(rb"[0-9]{19}")
"""19 digits in a row may be an integer past 64 bits, which orjson reads as a float and Python as an int."""
_DUMP_OPTIONS: Final = (
    orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS
)
"""Hand anything but plain JSON types back (orjson then raises), so the standard library serializes it as before."""


def parse_json(body: bytes) -> Any:
    """Parse a message as strict UTF-8 JSON.

    Raises:
        ParseError: not UTF-8, not JSON, a non-standard constant (`NaN`, `Infinity`), or nested too deeply.
    """
    if body.count(b"[") + body.count(b"{") <= _FAST_BRACKETS and (
        len(body) - len(body.translate(None, _DIGITS)) < 19 or _LONG_NUMBER.search(body) is None
    ):
        try:
            return orjson.loads(body)
        except orjson.JSONDecodeError:
            pass  # refused (or a lone surrogate escape, which Python accepts): the standard library decides
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise ParseError("Parse error: the body is not valid UTF-8") from None
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        raise ParseError("Parse error: the JSON is nested too deeply") from None
    except ValueError:
        raise ParseError("Parse error: the body is not valid JSON") from None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def dump_json(message: Any) -> bytes:
    """Serialize a message as compact JSON, non-ASCII escaped (lone surrogates a client sent cannot break it).

    The output is the standard library's `json.dumps(message, separators=(",", ":"))` but for two things:
    a float may be spelled differently (`0.00001` for `1e-05`: the same shortest round-trip value), and
    `enum.Enum` members and `uuid.UUID`s are written, where the standard library refuses them.

    Raises:
        TypeError, ValueError, RecursionError: the message holds something JSON cannot carry.
    """
    try:
        data = orjson.dumps(message, option=_DUMP_OPTIONS)
    except TypeError:  # not plain JSON, an integer past 64 bits, nested past 254: the standard library's case
        data = None
    # Non-ASCII is escaped here, and orjson writes NaN and Infinity as `null` where Python writes `NaN`:
    # those messages keep the standard library's bytes.
    if data is not None and data.isascii() and b"null" not in data:
        return data
    return json.dumps(message, separators=(",", ":")).encode("ascii")
