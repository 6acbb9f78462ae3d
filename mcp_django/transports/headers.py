"""MCP's request headers: trimmed values, MCP's header value encoding, and the stateless era's checks.

Framework-free, like the rest of the HTTP rules (`transports.http`): headers come in as a mapping looked
up by lower-case name. In the stateless era `Mcp-Method` and `Mcp-Name` mirror the body, and a tool's
`x-mcp-header` arguments are mirrored by `Mcp-Param-*` headers; a mismatch is a `HeaderMismatch`.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from typing import Any, Final

from mcp_django.protocol import HeaderMismatch
from mcp_django.protocol.context import META_PROTOCOL_VERSION
from mcp_django.protocol.meta import NAME_FIELDS

_BASE64_VALUE: Final = re.compile(r"=\?base64\?(.*)\?=", re.DOTALL)
_VISIBLE_ASCII: Final = re.compile(r"[\x20-\x7e\t]*")


def header_value(headers: Mapping[str, str], name: str) -> str | None:
    """A header's value with surrounding whitespace removed (RFC 9110 §5.5), or None when absent."""
    value = headers.get(name)
    return None if value is None else value.strip(" \t")


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


def check_mirror_headers(message: dict[str, Any], headers: Mapping[str, str], version_header: str) -> None:
    """Check the stateless era's request headers against the body they mirror.

    Raises:
        HeaderMismatch: `MCP-Protocol-Version` differs from `_meta`'s protocol version (when both
            are present), `Mcp-Method` is missing or differs from `method`, or `Mcp-Name` is missing
            or differs from `params.name` / `params.uri` for the methods that carry one.
    """
    method = message.get("method")
    params = message.get("params")
    params = params if isinstance(params, dict) else {}
    meta = params.get("_meta")
    body_version = meta.get(META_PROTOCOL_VERSION) if isinstance(meta, dict) else None
    if isinstance(body_version, str) and body_version != version_header:
        raise HeaderMismatch(
            f"Header mismatch: MCP-Protocol-Version is {version_header!r} but _meta says {body_version!r}"
        )
    mcp_method = header_value(headers, "mcp-method")
    if mcp_method is None:
        raise HeaderMismatch("Header mismatch: the Mcp-Method header is required")
    if decode_header_value(mcp_method) != method:
        raise HeaderMismatch(f"Header mismatch: Mcp-Method does not match the method {method!r}")
    field = NAME_FIELDS.get(method) if isinstance(method, str) else None
    if field is None or not isinstance(params.get(field), str):
        return
    mcp_name = header_value(headers, "mcp-name")
    if mcp_name is None:
        raise HeaderMismatch(f"Header mismatch: the Mcp-Name header is required for {method}")
    if decode_header_value(mcp_name) != params[field]:
        raise HeaderMismatch(f"Header mismatch: Mcp-Name does not match params.{field}")


def check_param_headers(arguments: Any, headers: Mapping[str, str], declared: Mapping[str, str]) -> None:
    """Check the `Mcp-Param-*` headers of a stateless `tools/call` against its arguments.

    Args:
        arguments: `params.arguments` of the call.
        headers: the request headers, looked up by lower-case name.
        declared: argument name -> header suffix, from the tool's `x-mcp-header` schema annotations.

    Raises:
        HeaderMismatch: an argument with a value lacks its header, a header comes without its
            argument, or the (decoded) header value differs from the argument.
    """
    arguments = arguments if isinstance(arguments, dict) else {}
    for argument, suffix in declared.items():
        raw = header_value(headers, f"mcp-param-{suffix.lower()}")
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
