"""MCP's request headers: trimmed values, MCP's header value encoding, and the stateless era's checks.

Framework-free, like the rest of the HTTP rules (`transports.http`): headers come in as a mapping looked
up by lower-case name. In the stateless era `Mcp-Method` and `Mcp-Name` mirror the body, checked here;
a tool's `x-mcp-header` arguments are mirrored by `Mcp-Param-*` headers, which the transport hands to the
call (`param_headers_of_call`) for the backend to check against the tool it finds. A mismatch is a
`HeaderMismatch`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from mcp_django.protocol import HeaderMismatch
from mcp_django.protocol.context import META_PROTOCOL_VERSION, ParamHeaders
from mcp_django.protocol.meta import NAME_FIELDS, decode_header_value

PARAM_HEADER: Final = "mcp-param-"


def header_value(headers: Mapping[str, str], name: str) -> str | None:
    """A header's value with surrounding whitespace removed (RFC 9110 §5.5), or None when absent."""
    value = headers.get(name)
    return None if value is None else value.strip(" \t")


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


def param_headers_of_call(message: dict[str, Any], headers: Mapping[str, str]) -> ParamHeaders | None:
    """What a stateless-era `tools/call` hands its backend to check: its `Mcp-Param-*` headers and arguments.

    None for any other message. `headers` may be any mapping of header names (each is lower-cased here).
    """
    params = message.get("params")
    if message.get("method") != "tools/call" or not isinstance(params, dict):
        return None
    sent = {
        name.lower()[len(PARAM_HEADER) :]: value.strip(" \t")
        for name, value in headers.items()
        if name.lower().startswith(PARAM_HEADER)
    }
    return ParamHeaders(sent, params.get("arguments"))
