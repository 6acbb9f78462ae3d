"""The wire types (mcp-types) and the checks built on them, loaded when the first message is served.

Importing mcp-types builds the pydantic models of every protocol revision it knows: close to a second
and some 30 MB, paid before anything can be validated. A process that serves no MCP (`migrate`, `check`,
`shell`, a cron job) never needs them, so no module of the package imports them at its top: the first
`MessageHandler` loads them through `wire()`, as does anything else that validates a message, and every
later call finds them loaded. The JSON-RPC and MCP error codes and the protocol versions are the
package's own constants (`jsonrpc.py`, `versions.py`; tests/protocol holds them to mcp-types').
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping
from typing import Any, get_args


@dataclasses.dataclass(frozen=True, slots=True)
class Wire:
    """What serving a message needs of mcp-types, and the checks of `shapes.py` built on its models."""

    server_results: Mapping[tuple[str, str], Any]
    complete_results: Mapping[tuple[str, str], Any]
    serialize_server_result: Callable[..., dict[str, Any]]
    validate_client_request: Callable[..., Any]
    validate_client_notification: Callable[..., Any]
    known_result: Callable[[str, str, Mapping[str, Any]], dict[str, Any] | None]
    known_valid: Callable[[str, str, Any], bool]
    known_valid_notification: Callable[[str, str, Any], bool]


@functools.cache
def wire() -> Wire:
    """The wire types, imported on the first call (the first message a process serves)."""
    from mcp_types import methods

    from mcp_django.protocol import result_shapes, shapes

    # mcp-types gives `CallToolResult | InputRequiredResult` for the 2026 multi-round methods, and a broken
    # complete result would quietly validate as the (all-optional) interim arm. Validate complete results
    # against the complete arm alone; `input_required` ones keep the union.
    complete = {
        key: next(arm for arm in get_args(row) if arm.__name__ != "InputRequiredResult") if get_args(row) else row
        for key, row in methods.SERVER_RESULTS.items()
    }
    return Wire(
        server_results=methods.SERVER_RESULTS,
        complete_results=complete,
        serialize_server_result=methods.serialize_server_result,
        validate_client_request=methods.validate_client_request,
        validate_client_notification=methods.validate_client_notification,
        known_result=result_shapes.known_result,
        known_valid=shapes.known_valid,
        known_valid_notification=shapes.known_valid_notification,
    )
