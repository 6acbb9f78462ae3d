"""The remote MCP connection against real servers: the example project under daphne, the official SDK's
server under uvicorn, and both of them as stdio subprocesses."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import pytest

from mcp_django.client.config import ServerConfig
from mcp_django.client.connection import connect, pool
from mcp_django.client.http import HTTPConnection
from mcp_django.client.stdio import StdioConnection
from mcp_django.exceptions import BackendUnavailable, RemoteError
from tests.conftest import ROOT, LiveServer
from tests.gateway.conftest import CONFORMANCE, mcp_stdio_command, sdk_stdio_command

pytestmark = pytest.mark.live

WAIT = 20.0
VERSIONS = {
    "http-2026": "2026-07-28",
    "http-2025": "2025-11-25",
    "stdio-2026": "2026-07-28",
    "stdio-2025": "2025-06-18",
}


@pytest.fixture(autouse=True)
async def _close_the_pool() -> AsyncIterator[None]:
    yield
    await pool.aclose()


def _stdio(command: list[str], env: dict[str, str], **extra: Any) -> dict[str, Any]:
    # A subprocess that loads Django before it answers: on a loaded machine that alone took the default 10 s.
    return {
        "COMMAND": command,
        "CWD": str(ROOT),
        "ENV": {"MCP_EXAMPLE_DB": env["MCP_EXAMPLE_DB"]},
        "CONNECT_TIMEOUT": 30,
        **extra,
    }


def _backends(example_server: LiveServer, env: dict[str, str]) -> dict[str, dict[str, Any]]:
    url = example_server.url(CONFORMANCE)
    return {
        "http-2026": {"URL": url},
        "http-2025": {"URL": url, "PROTOCOL_VERSION": "2025-11-25"},
        "stdio-2026": _stdio(mcp_stdio_command(), env),
        "stdio-2025": _stdio(mcp_stdio_command(), env, PROTOCOL_VERSION="2025-06-18"),
    }


@pytest.mark.parametrize("kind", ["http-2026", "http-2025", "stdio-2026", "stdio-2025"])
async def test_a_connection_negotiates_lists_calls_and_reports_errors_in_either_era(
    kind: str, example_server: LiveServer, live_server_env: dict[str, str]
) -> None:
    connection = connect(_backends(example_server, live_server_env)[kind])

    tools = await connection.request("tools/list")
    called = await connection.request("tools/call", {"name": "test_simple_text", "arguments": {}})
    with pytest.raises(RemoteError) as unknown:
        await connection.request("tools/call", {"name": "no_such_tool", "arguments": {}})

    assert connection.protocol_version == VERSIONS[kind]
    assert connection.server_info["name"] == "mcp-django-example"
    assert "tools" in connection.capabilities
    assert "test_simple_text" in {tool["name"] for tool in tools["tools"]}
    assert called["content"] == [{"type": "text", "text": "This is a simple text response for testing."}]
    assert unknown.value.code == -32602
    assert unknown.value.message == "Unknown tool: no_such_tool"


@pytest.mark.parametrize("kind", ["http-2026", "http-2025", "stdio-2026", "stdio-2025"])
async def test_the_progress_of_a_request_goes_to_that_request(
    kind: str, example_server: LiveServer, live_server_env: dict[str, str]
) -> None:
    connection = connect(_backends(example_server, live_server_env)[kind])
    progress: list[dict[str, Any]] = []

    await connection.request(
        "tools/call",
        {"name": "test_tool_with_progress", "arguments": {}},
        meta={"progressToken": "p-1", "io.modelcontextprotocol/protocolVersion": "1999-01-01"},
        on_notification=progress.append,
    )

    assert [message["params"]["progress"] for message in progress] == [0, 50, 100]
    assert {message["params"]["progressToken"] for message in progress} == {"p-1"}


@pytest.mark.parametrize("kind", ["http-2026", "http-2025", "stdio-2026", "stdio-2025"])
async def test_listeners_receive_the_servers_list_changed_notifications(
    kind: str, example_server: LiveServer, live_server_env: dict[str, str]
) -> None:
    connection = connect(_backends(example_server, live_server_env)[kind])
    received: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    connection.add_listener(received.put_nowait)
    await connection.request("tools/list")

    async def announce_until_heard() -> dict[str, Any]:
        # The listen stream opens in the background: announce until it is there to hear it.
        while True:
            await connection.request("tools/call", {"name": "test_trigger_tool_change", "arguments": {}})
            try:
                return await asyncio.wait_for(received.get(), 1.0)
            except TimeoutError:
                continue

    heard = await asyncio.wait_for(announce_until_heard(), WAIT)

    assert heard == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}


async def test_one_pooled_connection_serves_every_caller_of_a_server(
    live_server_env: dict[str, str],
) -> None:
    config = _stdio(sdk_stdio_command(), live_server_env)
    connection = connect(config)

    results = await asyncio.gather(
        *(connection.request("tools/call", {"name": "echo", "arguments": {"text": str(n)}}) for n in range(8))
    )

    assert connect(config) is connection
    assert isinstance(connection, StdioConnection)
    assert [result["content"][0]["text"] for result in results] == [str(n) for n in range(8)]
    assert connection.server_info == {"name": "sdk-backend", "version": "9.9.9"}


async def test_a_session_the_server_forgot_is_opened_again(example_server: LiveServer) -> None:
    connection = connect({"URL": example_server.url(CONFORMANCE), "PROTOCOL_VERSION": "2025-11-25"})
    await connection.request("tools/list")
    assert isinstance(connection, HTTPConnection)
    forgotten = connection._session_id
    assert forgotten
    async with httpx2.AsyncClient() as client:
        deleted = await client.delete(
            example_server.url(CONFORMANCE),
            headers={"Mcp-Session-Id": forgotten, "MCP-Protocol-Version": "2025-11-25"},
        )
    assert deleted.status_code in (200, 204)

    result = await connection.request("tools/call", {"name": "test_simple_text", "arguments": {}})

    assert result["content"][0]["text"] == "This is a simple text response for testing."
    assert connection._session_id not in (None, forgotten)


async def test_a_server_that_is_down_is_reported_at_once_not_waited_for() -> None:
    connection = connect({"URL": "http://127.0.0.1:9/mcp", "CONNECT_TIMEOUT": 5})

    with pytest.raises(BackendUnavailable) as down:
        await asyncio.wait_for(connection.request("tools/list"), WAIT)

    assert down.value.data == {"backend": "http://127.0.0.1:9/mcp", "reason": "unreachable"}
    assert down.value.code == -32603


async def test_a_command_that_cannot_start_is_reported() -> None:
    connection = connect(ServerConfig(name="missing", command=("/nonexistent/mcp-server",)))

    with pytest.raises(BackendUnavailable) as down:
        await connection.request("tools/list")

    assert down.value.data == {"backend": "missing", "reason": "unreachable"}


async def test_a_call_that_outlives_the_read_timeout_fails_with_timeout(sdk_backend_url: str) -> None:
    connection = connect({"URL": sdk_backend_url})

    with pytest.raises(BackendUnavailable) as late:
        await connection.request("tools/call", {"name": "slow", "arguments": {"seconds": 30}}, timeout=0.5)

    assert late.value.data == {"backend": sdk_backend_url, "reason": "timeout"}
    assert late.value.message == f"Backend {sdk_backend_url!r} unavailable: no answer to tools/call within 0.5s"


async def test_a_stdio_server_killed_mid_call_fails_the_call_and_the_next_call_starts_it_again(
    live_server_env: dict[str, str],
) -> None:
    connection = connect(_stdio(sdk_stdio_command(), live_server_env))
    await connection.request("tools/list")
    assert isinstance(connection, StdioConnection)
    assert connection._process is not None
    first_pid = connection._process.pid
    call = asyncio.ensure_future(connection.request("tools/call", {"name": "slow", "arguments": {"seconds": 60}}))
    await asyncio.sleep(0.5)  # let the request reach the process before it dies (either way the call must fail)

    os.kill(first_pid, signal.SIGKILL)
    with pytest.raises(BackendUnavailable) as killed:
        await asyncio.wait_for(call, WAIT)
    again = await connection.request("tools/call", {"name": "echo", "arguments": {"text": "back"}})

    assert killed.value.data == {"backend": connection.server.name, "reason": "closed"}
    assert again["content"][0]["text"] == "back"
    assert connection._process is not None
    assert connection._process.pid != first_pid


async def test_only_the_configured_credentials_reach_the_server(sdk_backend_url: str) -> None:
    connection = connect({"URL": sdk_backend_url, "TOKEN": "gateway-token", "HEADERS": {"X-Gateway-Key": "k1"}})

    result = await connection.request("tools/call", {"name": "seen_headers", "arguments": {}})

    headers = result["structuredContent"]["headers"]
    assert headers["authorization"] == "Bearer gateway-token"
    assert headers["x-gateway-key"] == "k1"
    assert "cookie" not in headers
