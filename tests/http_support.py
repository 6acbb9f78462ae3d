"""Helpers for the HTTP transport tests: well-formed requests of both eras, and readers for the answers."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from django.test import Client

if TYPE_CHECKING:
    from django.test.client import _MonkeyPatchedWSGIResponse as Response

ACCEPT = "application/json, text/event-stream"
HANDSHAKE_VERSION = "2025-11-25"
STATELESS_VERSION = "2026-07-28"
CLIENT_INFO = {"name": "tests", "version": "1.0"}


def request(method: str, params: dict[str, Any] | None = None, id: int | str = 1) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def initialize(version: str = HANDSHAKE_VERSION, id: int = 1) -> dict[str, Any]:
    return request("initialize", {"protocolVersion": version, "capabilities": {}, "clientInfo": CLIENT_INFO}, id=id)


def stateless(
    method: str, params: dict[str, Any] | None = None, id: int = 1, meta: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A 2026-07-28 request with the per-request `_meta` it needs."""
    full_meta = {
        "io.modelcontextprotocol/protocolVersion": STATELESS_VERSION,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
        **(meta or {}),
    }
    return request(method, {**(params or {}), "_meta": full_meta}, id=id)


def stateless_headers(method: str, name: str | None = None, **extra: str) -> dict[str, str]:
    headers = {"MCP-Protocol-Version": STATELESS_VERSION, "Mcp-Method": method, **extra}
    if name is not None:
        headers["Mcp-Name"] = name
    return headers


def post(
    client: Client,
    body: Any,
    headers: dict[str, str] | None = None,
    *,
    path: str = "/mcp",
    content_type: str = "application/json",
    accept: str | None = ACCEPT,
) -> Response:
    """POST `body` (bytes as they are, anything else as JSON) the way an MCP client does."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    all_headers = dict(headers or {})
    if accept is not None:
        all_headers["Accept"] = accept
    return client.post(path, data=data, content_type=content_type, headers=all_headers)


def open_session(client: Client, path: str = "/mcp") -> str:
    """Initialize, confirm with `notifications/initialized`, and return the session id."""
    response = post(client, initialize(), path=path)
    assert response.status_code == 200, response.content
    session_id: str = response["Mcp-Session-Id"]
    initialized = post(
        client, {"jsonrpc": "2.0", "method": "notifications/initialized"}, {"Mcp-Session-Id": session_id}, path=path
    )
    assert initialized.status_code == 202
    return session_id


def sse_messages(body: bytes) -> list[dict[str, Any]]:
    """The JSON-RPC messages of an SSE body, in order."""
    messages = []
    for event in body.decode().split("\n\n"):
        data = [line[len("data: ") :] for line in event.splitlines() if line.startswith("data: ")]
        if data:
            messages.append(json.loads("\n".join(data)))
    return messages


def error_of(response: Response) -> dict[str, Any]:
    assert response["Content-Type"] == "application/json"
    error: dict[str, Any] = json.loads(response.content)["error"]
    return error
