"""Every error a user of mcp_django raises or catches, in one module.

Raise `ToolError` from a tool for a failure the model reads, an `MCPError` subclass (`InvalidParams`,
`ResourceNotFound`, `InternalError`…) for a JSON-RPC error, `ActionError` from a bus action; catch
`RemoteError` and `BackendUnavailable` around `MCPClient` calls, `ClientRequestError` around questions to
the client, `MCPCallError` around `MCPTestClient` calls. The protocol errors are defined in the
Django-free protocol core (`mcp_django.protocol.jsonrpc`) and offered here; every other error is defined
here, and no other module of the package passes one on.
"""

from __future__ import annotations

from typing import Any

from mcp_django.protocol.inputs import ClientRequestError
from mcp_django.protocol.jsonrpc import (
    INTERNAL_ERROR,
    InternalError,
    InvalidParams,
    MCPError,
    MethodNotFound,
    MissingClientCapability,
    ResourceNotFound,
)

__all__ = [
    "ActionError",
    "BackendUnavailable",
    "ClientRequestError",
    "DeclarationError",
    "InternalError",
    "InvalidParams",
    "MCPCallError",
    "MCPError",
    "MethodNotFound",
    "MissingClientCapability",
    "RegistryFrozen",
    "RemoteError",
    "ResourceNotFound",
    "ToolError",
]


class RegistryFrozen(RuntimeError):
    """A registration came after `ready()`: registries, the provider registry and buses are frozen by then.

    Declare tools, resources, prompts, providers and bus actions in modules loaded while Django starts
    (an app's `mcp.py`, `mcp_providers`, `mcp_bus_modules`).
    """


class DeclarationError(TypeError):
    """A tool, resource, prompt or completion cannot be declared as written."""


class ToolError(Exception):
    """Raise from a tool to return an `isError` result whose text is exactly the message.

    Any other exception also becomes an `isError` result, but prefixed with
    "Error executing tool <name>:" and logged with its traceback; `ToolError` is
    for failures the model is meant to read and act on.
    """


class ActionError(Exception):
    """Raised by an action (or middleware) to fail with a code and a message the caller may read.

    Args:
        message: shown to the caller (and, through the bus provider, to the model).
        code: a stable, machine-readable code; `"action_failed"` unless given.
    """

    def __init__(self, message: str, code: str = "action_failed") -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class RemoteError(MCPError):
    """The remote server answered a request with a JSON-RPC error: its code, message and data, unchanged."""

    def __init__(self, code: int, message: str, data: Any = None, *, server: str = "") -> None:
        super().__init__(message or "Remote error", data=data)
        self.code = code
        self.server = server


class BackendUnavailable(MCPError):
    """The remote server is down, did not answer in time, refused the gateway, or broke the protocol.

    `reason` is one of `unreachable`, `timeout`, `refused`, `closed`, `protocol`, or `limit` (it sent
    more than the gateway's bounds allow, `client.limits`); it travels as `data.reason` beside
    `data.backend` (the configured name, never the URL or command).
    """

    code = INTERNAL_ERROR
    default_message = "Backend unavailable"

    def __init__(self, server: str, reason: str, detail: str) -> None:
        super().__init__(f"Backend {server!r} unavailable: {detail}", data={"backend": server, "reason": reason})
        self.server = server
        self.reason = reason


class MCPCallError(Exception):
    """The server answered a request with a JSON-RPC error (what `MCPTestClient` and `MCPHTTPClient` raise)."""

    def __init__(self, error: dict[str, Any]) -> None:
        self.code: int = error["code"]
        self.message: str = error["message"]
        self.data: Any = error.get("data")
        super().__init__(f"{self.code}: {self.message}")
