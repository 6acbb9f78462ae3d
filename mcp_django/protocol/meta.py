"""Which era and protocol version a message is served at, and the stateless era's per-request checks: its
`_meta`, and a tool's `x-mcp-header` arguments against the `Mcp-Param-*` headers that mirror them."""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from typing import Any, Final

from mcp_django.protocol.context import (
    LOG_LEVELS,
    META_CLIENT_CAPABILITIES,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
    Connection,
    ParamHeaders,
)
from mcp_django.protocol.jsonrpc import HeaderMismatch, InvalidParams, UnsupportedProtocolVersion
from mcp_django.protocol.versions import (
    DEFAULT_HEADERLESS_VERSION,
    LATEST_HANDSHAKE_VERSION,
    STATELESS_VERSIONS,
    SUPPORTED_VERSIONS,
    Era,
    era_of_header,
)

NAME_FIELDS: Final[Mapping[str, str]] = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    # the tasks extension (SEP-2663): its methods name the task
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}
"""The methods whose `Mcp-Name` header (stateless era, HTTP) mirrors a params field, and that field."""


def era_of(params: Any, connection: Connection) -> tuple[Era, str]:
    """Decide the era of a message and the protocol version it is served at."""
    if connection.session is not None:
        return Era.HANDSHAKE, connection.session.protocol_version
    header = connection.version_header
    if header is not None:
        era = era_of_header(header)
        return era, (header if era is Era.HANDSHAKE else LATEST_HANDSHAKE_VERSION)
    meta = params.get("_meta") if isinstance(params, dict) else None
    if isinstance(meta, dict) and META_PROTOCOL_VERSION in meta:
        return Era.STATELESS, LATEST_HANDSHAKE_VERSION
    return Era.HANDSHAKE, DEFAULT_HEADERLESS_VERSION


def check_stateless_meta(params: Mapping[str, Any]) -> tuple[str, str | None]:
    """Validate the per-request `_meta` of a stateless request, in the order the spec gives."""
    meta = params.get("_meta")
    if not isinstance(meta, dict):
        raise InvalidParams("Invalid params: _meta is required")
    version = meta.get(META_PROTOCOL_VERSION)
    if not isinstance(version, str):
        raise InvalidParams(f"Invalid params: _meta[{META_PROTOCOL_VERSION!r}] is required")
    if not isinstance(meta.get(META_CLIENT_CAPABILITIES), dict):
        raise InvalidParams(f"Invalid params: _meta[{META_CLIENT_CAPABILITIES!r}] is required")
    if version not in STATELESS_VERSIONS:
        raise UnsupportedProtocolVersion(data={"supported": list(SUPPORTED_VERSIONS), "requested": version})
    log_level = meta.get(META_LOG_LEVEL)
    if log_level is not None and log_level not in LOG_LEVELS:
        raise InvalidParams(f"Invalid params: unknown log level {log_level!r}")
    return version, log_level


def param_headers_of(input_schema: Any) -> dict[str, str]:
    """The `x-mcp-header` annotations of a tool's input schema: argument -> its `Mcp-Param-` header suffix.

    A stateless `tools/call` mirrors each such argument in a header (`Mcp-Param-<suffix>`).
    """
    properties = input_schema.get("properties") if isinstance(input_schema, dict) else None
    return {
        argument: schema["x-mcp-header"]
        for argument, schema in (properties.items() if isinstance(properties, dict) else ())
        if isinstance(schema, dict) and isinstance(schema.get("x-mcp-header"), str)
    }


_HEADER_NAME: Final = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
"""An HTTP field name (RFC 9110 token): what `Mcp-Param-<suffix>` may be built from."""
_HEADER_TYPES: Final = frozenset({"string", "integer", "boolean"})
"""The argument types an `x-mcp-header` may annotate (a number's text form is not exact enough to mirror)."""


def param_header_error(input_schema: Any) -> str | None:
    """Why a tool's `x-mcp-header` annotations are invalid, or None when they are valid (or absent).

    Each must be a non-empty header-name token, unique in the tool without regard to case, on an argument
    of type string, integer or boolean. A client excludes a tool whose annotations are invalid.
    """
    properties = input_schema.get("properties") if isinstance(input_schema, dict) else None
    seen: set[str] = set()
    for argument, schema in properties.items() if isinstance(properties, dict) else ():
        if not isinstance(schema, dict) or "x-mcp-header" not in schema:
            continue
        suffix = schema["x-mcp-header"]
        if not isinstance(suffix, str) or not _HEADER_NAME.fullmatch(suffix):
            return f"x-mcp-header {suffix!r} of {argument!r} is not a header name"
        if suffix.lower() in seen:
            return f"x-mcp-header {suffix!r} of {argument!r} is used twice"
        seen.add(suffix.lower())
        if schema.get("type") not in _HEADER_TYPES:
            return f"x-mcp-header on {argument!r}, whose type is not string, integer or boolean"
    return None


_BASE64_VALUE: Final = re.compile(r"=\?base64\?(.*)\?=", re.DOTALL)
_VISIBLE_ASCII: Final = re.compile(r"[\x20-\x7e\t]*")


def decode_header_value(value: str) -> str:
    """Decode an MCP header value, which is either literal ASCII or `=?base64?<UTF-8 as base64>?=`.

    Raises:
        HeaderMismatch: characters outside visible ASCII, or a malformed base64 value.
    """
    if not (value.isascii() and value.isprintable()) and not _VISIBLE_ASCII.fullmatch(value):
        raise HeaderMismatch("Header mismatch: header values must be visible ASCII")
    encoded = _BASE64_VALUE.fullmatch(value) if value.startswith("=?") else None
    if encoded is None:
        return value
    try:
        return base64.b64decode(encoded.group(1), validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        raise HeaderMismatch("Header mismatch: invalid base64 header value") from None


def check_param_headers(sent: ParamHeaders, declared: Mapping[str, str]) -> None:
    """Check a stateless `tools/call`'s `Mcp-Param-*` headers against the arguments the client sent.

    Args:
        sent: the call's headers and arguments, as its transport received them.
        declared: argument name -> header suffix, the found tool's `x-mcp-header` annotations.

    Raises:
        HeaderMismatch: an argument with a value lacks its header, a header comes without its
            argument, or the (decoded) header value differs from the argument.
    """
    arguments = sent.arguments if isinstance(sent.arguments, dict) else {}
    for argument, suffix in declared.items():
        raw = sent.headers.get(suffix.lower())
        value = arguments.get(argument)
        if value is None:
            if raw is not None:
                raise HeaderMismatch(f"Header mismatch: Mcp-Param-{suffix} is sent without the argument {argument!r}")
            continue
        if raw is None:
            raise HeaderMismatch(f"Header mismatch: the Mcp-Param-{suffix} header is required")
        if not _same_value(decode_header_value(raw), value):
            raise HeaderMismatch(f"Header mismatch: Mcp-Param-{suffix} does not match the argument {argument!r}")


def _same_value(header: str, value: Any) -> bool:
    """Compare a header's text with the JSON value it mirrors (numbers numerically, booleans as true/false)."""
    if isinstance(value, bool):
        return header == ("true" if value else "false")
    if isinstance(value, (int, float)):
        try:
            number = float(header)
        except ValueError:
            return False
        return number == value if isinstance(value, int) else abs(number - value) <= 1e-9
    if isinstance(value, str):
        return header == value
    return True  # x-mcp-header is only allowed on primitive arguments
