"""The MCP requests the benchmark sends: `tools/call` echo in both eras, `tools/list` pages, the handshake.

A workload is prepared once per server before the rounds (`prepare`): the handshake era opens its session
with `initialize` + `notifications/initialized` and every call carries its `Mcp-Session-Id`; the
2026-07-28 era sends `_meta` and the `Mcp-Method`/`Mcp-Name` headers on every call, with no session.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from benchmarks import client

HANDSHAKE_VERSION: Final = "2025-11-25"
MODERN_VERSION: Final = "2026-07-28"
TOKEN: Final = "benchmark0token0benchmark0token0bench000"
"""The DRF token key `benchmarks.prepare` creates for the token + audit rows (40 characters)."""

ACCEPT: Final = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
META: Final = {
    "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "0"},
}

Era = Literal["handshake", "stateless", "2026", "none"]


@dataclass(frozen=True)
class Workload:
    """What a row sends: the era, the kind of call, and whether it carries the benchmark's token."""

    key: str
    label: str
    era: Era
    kind: Literal["call", "list", "floor"] = "call"
    token: bool = False
    tool: str = "echo"
    """The tool a call row calls: `echo` (async def), `echo_sync` (def), `count_users` (def, one ORM read)."""
    connections: int | None = None
    """None: the run's connection count; 1 measures a latency without the queueing of concurrent callers."""


@dataclass(frozen=True)
class Prepared:
    """The request bodies (cycled through) and headers of a workload, ready for a given server."""

    bodies: tuple[bytes, ...]
    headers: Mapping[str, str]
    expect: bytes
    """A fragment every answer must contain (checked on a probe before the rounds)."""


def message(method: str, params: Mapping[str, Any] | None = None, id: int | None = 1) -> bytes:
    body: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if id is not None:
        body["id"] = id
    if params is not None:
        body["params"] = dict(params)
    return json.dumps(body, separators=(",", ":")).encode()


def initialize(version: str = HANDSHAKE_VERSION) -> bytes:
    return message(
        "initialize",
        {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}},
    )


def call_echo(era: Era, tool: str = "echo") -> bytes:
    params: dict[str, Any] = {"name": tool, "arguments": {"text": "hello"}}
    if era == "2026":
        params["_meta"] = META
    return message("tools/call", params)


class ProbeFailed(RuntimeError):
    """A server answered a workload's probe with something other than the expected answer."""


async def open_session(port: int, path: str, headers: Mapping[str, str]) -> str:
    """Run the handshake (`initialize`, `notifications/initialized`) and return the session id."""
    answer = await client.request(port, path, initialize(), headers)
    session = answer.headers.get("mcp-session-id")
    if answer.status != 200 or not session:
        raise ProbeFailed(f"initialize: HTTP {answer.status}, no session id: {answer.body[:200]!r}")
    session_headers = {**headers, "Mcp-Session-Id": session, "MCP-Protocol-Version": HANDSHAKE_VERSION}
    done = await client.request(port, path, message("notifications/initialized", id=None), session_headers)
    if done.status not in (200, 202):
        raise ProbeFailed(f"notifications/initialized: HTTP {done.status}: {done.body[:200]!r}")
    return session


async def list_pages(port: int, path: str, headers: Mapping[str, str]) -> tuple[bytes, ...]:
    """Walk `tools/list` to the end; the request body of every page, in order."""
    bodies: list[bytes] = []
    cursor = None
    while True:
        params: dict[str, Any] = {"_meta": META}
        if cursor:
            params["cursor"] = cursor
        body = message("tools/list", params)
        bodies.append(body)
        answer = await client.request(port, path, body, headers)
        if answer.status != 200:
            raise ProbeFailed(f"tools/list: HTTP {answer.status}: {answer.body[:200]!r}")
        result = json.loads(answer.body)["result"]
        cursor = result.get("nextCursor")
        if not cursor:
            return tuple(bodies)


async def prepare(workload: Workload, port: int, path: str) -> Prepared:
    """Open what the workload needs on the server (a session, the cursors) and probe one call."""
    headers = dict(ACCEPT)
    if workload.token:
        headers["Authorization"] = f"Bearer {TOKEN}"
    if workload.kind == "floor":
        prepared = Prepared((call_echo("2026"),), headers, b"hello")
    elif workload.kind == "list":
        headers.update({"MCP-Protocol-Version": MODERN_VERSION, "Mcp-Method": "tools/list"})
        prepared = Prepared(await list_pages(port, path, headers), headers, b"tool_")
    elif workload.era == "handshake":
        session = await open_session(port, path, headers)
        headers.update({"Mcp-Session-Id": session, "MCP-Protocol-Version": HANDSHAKE_VERSION})
        prepared = Prepared((call_echo("handshake", workload.tool),), headers, b"hello")
    elif workload.era == "stateless":
        headers["MCP-Protocol-Version"] = HANDSHAKE_VERSION
        prepared = Prepared((call_echo("stateless", workload.tool),), headers, b"hello")
    else:
        headers.update({"MCP-Protocol-Version": MODERN_VERSION, "Mcp-Method": "tools/call", "Mcp-Name": workload.tool})
        prepared = Prepared((call_echo("2026", workload.tool),), headers, b"hello")
    for body in prepared.bodies[:1] + prepared.bodies[-1:]:
        answer = await client.request(port, path, body, prepared.headers)
        if answer.status != 200 or prepared.expect not in answer.body or b'"error"' in answer.body:
            raise ProbeFailed(f"HTTP {answer.status}: {answer.body[:300]!r}")
    return prepared
