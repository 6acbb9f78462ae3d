"""The stdio transport: its line reader and loop over asyncio streams, then `manage.py mcp_stdio` for real."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import AsyncIterator
from functools import partial
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.types import CreateMessageRequestParams, CreateMessageResult, TextContent

from mcp_django import Context, Registry
from mcp_django.protocol import Connection, MessageHandler
from mcp_django.protocol.context import NotificationSource
from mcp_django.transports.stdio import read_lines, serve_stdio
from tests.conftest import ROOT

registry = Registry("stdio-tests")
gates: dict[str, asyncio.Event] = {}
started: dict[str, asyncio.Event] = {}


@registry.tool
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@registry.tool
async def wait(ctx: Context, gate: str) -> str:
    """Log once, then finish when the test opens the gate."""
    await ctx.info(f"waiting for {gate}")
    started[gate].set()
    await gates[gate].wait()
    return f"{gate} opened"


STATELESS_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
PROCESS_TIMEOUT_S = 60


def line(message: Any) -> bytes:
    return json.dumps(message).encode() + b"\n"


def stateless(method: str, params: dict[str, Any] | None = None, id: int | str = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "method": method, "params": {**(params or {}), "_meta": STATELESS_META}}


def call(name: str, arguments: dict[str, Any], id: int | str = 1) -> dict[str, Any]:
    return stateless("tools/call", {"name": name, "arguments": arguments}, id)


def open_gate(name: str) -> None:
    gates[name], started[name] = asyncio.Event(), asyncio.Event()


async def until(event: asyncio.Event) -> None:
    await asyncio.wait_for(event.wait(), timeout=5)


# ----------------------------------------------------------------------------------- read_lines


async def lines_of(data: bytes, limit: int, chunk: int) -> list[bytes | None]:
    reader = asyncio.StreamReader()
    reader.feed_data(data)
    reader.feed_eof()
    return [item async for item in read_lines(partial(reader.read, chunk), limit)]


@pytest.mark.parametrize("chunk", [1, 3, 7, 1024])
async def test_lines_are_split_at_newlines_whatever_the_chunks(chunk: int) -> None:
    data = b'{"a":1}\n{"b":2}\r\n\n{"c":3}'

    assert await lines_of(data, limit=100, chunk=chunk) == [b'{"a":1}', b'{"b":2}', b"", b'{"c":3}']


@pytest.mark.parametrize("chunk", [1, 4, 5, 16, 1024])
async def test_an_over_long_line_is_dropped_and_reading_resyncs_at_the_next_newline(chunk: int) -> None:
    data = b"short\n" + b"x" * 40 + b"\nafter\n" + b"y" * 11 + b"\n" + b"z" * 10 + b"\nend"

    lines = await lines_of(data, limit=10, chunk=chunk)

    assert lines == [b"short", None, b"after", None, b"z" * 10, b"end"]


async def test_an_over_long_last_line_without_a_newline_is_dropped() -> None:
    assert await lines_of(b"ok\n" + b"x" * 50, limit=10, chunk=8) == [b"ok", None]


# ----------------------------------------------------------------------------------- serve_stdio


class Pipe:
    """Both ends of a stdio conversation in memory: feed lines in, await the messages that come out."""

    def __init__(self, limit: int = 4096, notifications: NotificationSource | None = None) -> None:
        self.input = asyncio.StreamReader()
        self.output: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.raw: list[bytes] = []
        handler = MessageHandler(registry.backend(), server_info={"name": "stdio-tests", "version": "1"})
        connection = Connection(transport="stdio", notifications=notifications)
        self.task = asyncio.ensure_future(
            serve_stdio(handler, connection, partial(self.input.read, 4096), self.write, limit=limit)
        )

    async def write(self, data: bytes) -> None:
        self.raw.append(data)
        await self.output.put(json.loads(data))

    def send(self, *messages: Any) -> None:
        for message in messages:
            self.input.feed_data(message if isinstance(message, bytes) else line(message))

    async def receive(self) -> dict[str, Any]:
        return await asyncio.wait_for(self.output.get(), timeout=5)

    async def close(self) -> None:
        self.input.feed_eof()
        await asyncio.wait_for(self.task, timeout=5)


@pytest.fixture
async def pipe() -> AsyncIterator[Pipe]:
    opened = Pipe(limit=300)
    yield opened
    if not opened.task.done():
        opened.task.cancel()
        await asyncio.gather(opened.task, return_exceptions=True)


async def test_each_reply_is_one_line_of_json(pipe: Pipe) -> None:
    pipe.send(call("echo", {"text": "two\nlines"}))

    reply = await pipe.receive()

    assert reply["result"]["content"] == [{"type": "text", "text": "two\nlines"}]
    assert pipe.raw[0].endswith(b"}\n")
    assert pipe.raw[0].count(b"\n") == 1


async def test_a_line_that_is_not_json_gets_a_parse_error_and_the_loop_goes_on(pipe: Pipe) -> None:
    pipe.send(b"this is not json\n", b"   \n", call("echo", {"text": "next"}, id=2))

    error = await pipe.receive()
    reply = await pipe.receive()

    assert error == {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": error["error"]["message"]}}
    assert reply["id"] == 2


async def test_an_over_long_line_gets_an_error_and_the_next_line_is_served(pipe: Pipe) -> None:
    pipe.send(call("echo", {"text": "x" * 1000}), call("echo", {"text": "fits"}, id=2))

    error = await pipe.receive()
    reply = await pipe.receive()

    assert error["error"] == {"code": -32600, "message": "Request too large: a message may have at most 300 bytes"}
    assert reply["id"] == 2
    assert reply["result"]["content"] == [{"type": "text", "text": "fits"}]


async def test_a_slow_request_does_not_hold_up_a_later_fast_one(pipe: Pipe) -> None:
    open_gate("slow")
    pipe.send(call("wait", {"gate": "slow"}, id="slow"), call("echo", {"text": "fast"}, id="fast"))

    first = await pipe.receive()
    await until(started["slow"])
    gates["slow"].set()
    second = await pipe.receive()

    assert first["id"] == "fast"
    assert second["id"] == "slow"


async def test_a_handshake_session_lasts_as_long_as_the_process(pipe: Pipe) -> None:
    open_gate("handshake")
    gates["handshake"].set()
    pipe.send(
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "wait", "arguments": {"gate": "handshake"}},
        },
    )

    opened = await pipe.receive()
    log = await pipe.receive()
    reply = await pipe.receive()

    assert opened["result"]["protocolVersion"] == "2025-06-18"
    assert log["method"] == "notifications/message"  # a handshake session gets log messages by default
    assert reply["id"] == 1
    assert "resultType" not in reply["result"]


def handshake(version: str) -> dict[str, Any]:
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    return {"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": params}


def ping(id: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "method": "ping"}


async def test_a_batch_before_initialize_is_refused_as_over_http(pipe: Pipe) -> None:
    pipe.send([ping(1), ping(2)])

    reply = await pipe.receive()

    assert reply["error"]["code"] == -32600
    assert reply["id"] is None


@pytest.mark.parametrize(("version", "served"), [("2025-03-26", True), ("2025-06-18", False)])
async def test_a_batch_is_served_only_in_a_2025_03_26_session(pipe: Pipe, version: str, served: bool) -> None:
    pipe.send(handshake(version), {"jsonrpc": "2.0", "method": "notifications/initialized"})
    await pipe.receive()

    pipe.send([ping(1), ping(2)])
    reply: Any = await pipe.receive()

    if served:
        assert sorted(item["id"] for item in reply) == [1, 2]
    else:
        assert reply["error"]["code"] == -32600


async def test_a_cancelled_request_is_never_answered(pipe: Pipe) -> None:
    open_gate("cancel")
    pipe.send(call("wait", {"gate": "cancel"}, id=5))
    await until(started["cancel"])

    pipe.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5}})
    pipe.send(call("echo", {"text": "after"}, id=6))
    reply = await pipe.receive()
    gates["cancel"].set()
    await pipe.close()

    assert reply["id"] == 6
    assert pipe.output.empty()


async def test_end_of_input_ends_the_loop_once_requests_in_flight_are_answered(pipe: Pipe) -> None:
    open_gate("eof")
    pipe.send(call("wait", {"gate": "eof"}, id="last"))
    await until(started["eof"])

    pipe.input.feed_eof()
    await asyncio.sleep(0)  # let the loop see the end of input
    still_serving = not pipe.task.done()
    gates["eof"].set()
    await asyncio.wait_for(pipe.task, timeout=5)

    assert still_serving
    assert (await pipe.receive())["id"] == "last"


async def test_server_notifications_reach_a_handshake_client_once_it_is_initialized() -> None:
    notes: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    async def relay() -> AsyncIterator[dict[str, Any]]:
        while True:
            yield await notes.get()

    async def source() -> AsyncIterator[dict[str, Any]]:
        return relay()

    pipe = Pipe(notifications=source)
    pipe.send(
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
    )
    await pipe.receive()
    await pipe.receive()

    await notes.put({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    changed = await pipe.receive()
    await pipe.close()

    assert changed == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}


# ----------------------------------------------------------------------------------- manage.py mcp_stdio


@pytest.fixture(scope="module")
def stdio_env(live_server_env: dict[str, str]) -> dict[str, str]:
    """The example project's migrated, seeded database, plus a user named alice."""
    subprocess.run(
        [
            sys.executable,
            "manage.py",
            "shell",
            "-c",
            "from django.contrib.auth.models import User; User.objects.get_or_create(username='alice')",
        ],
        cwd=ROOT,
        env=live_server_env,
        check=True,
        capture_output=True,
    )
    return live_server_env


def run_stdio(env: dict[str, str], stdin: bytes, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "manage.py", "mcp_stdio", *args],
        cwd=ROOT,
        env=env,
        input=stdin,
        capture_output=True,
        timeout=PROCESS_TIMEOUT_S,
        check=False,
    )


def replies(stdout: bytes) -> list[dict[str, Any]]:
    return [json.loads(text) for text in stdout.splitlines()]


def test_the_command_serves_a_handshake_session_as_the_named_user(stdio_env: dict[str, str]) -> None:
    stdin = b"".join(
        [
            line(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-11-25",
                        "capabilities": {},
                        "clientInfo": {"name": "t", "version": "1"},
                    },
                }
            ),
            line({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            line(
                {
                    "jsonrpc": "2.0",
                    "id": 2,
                    "method": "tools/call",
                    "params": {"name": "search_books", "arguments": {"query": "Dune"}},
                }
            ),
        ]
    )

    result = run_stdio(stdio_env, stdin, "--endpoint", "server", "--user", "alice")

    assert result.returncode == 0, result.stderr.decode()
    by_id = {reply["id"]: reply for reply in replies(result.stdout)}
    assert by_id[1]["result"]["serverInfo"]["name"] == "mcp-django-example"
    assert "Dune" in by_id[2]["result"]["content"][0]["text"]


def test_the_command_survives_bad_and_over_long_lines(stdio_env: dict[str, str]) -> None:
    huge = b"[" + b" " * (5 * 1024 * 1024) + b"]\n"  # over the default MAX_REQUEST_BYTES of 4 MiB
    stdin = b"not json\n" + huge + line(call("test_simple_text", {}, id="after"))

    result = run_stdio(stdio_env, stdin, "--endpoint", "conformance")

    assert result.returncode == 0, result.stderr.decode()
    codes = [reply["error"]["code"] for reply in replies(result.stdout) if "error" in reply]
    answered = [reply["id"] for reply in replies(result.stdout) if "result" in reply]
    assert sorted(codes) == [-32700, -32600]
    assert answered == ["after"]


def test_end_of_input_waits_for_the_requests_in_flight(stdio_env: dict[str, str]) -> None:
    result = run_stdio(stdio_env, line(call("test_tool_with_progress", {}, id="slow")), "--endpoint", "conformance")

    assert result.returncode == 0, result.stderr.decode()
    assert [reply.get("id") for reply in replies(result.stdout)] == ["slow"]


def test_an_unknown_user_is_an_error_on_stderr(stdio_env: dict[str, str]) -> None:
    result = run_stdio(stdio_env, b"", "--user", "nobody")

    assert result.returncode == 1
    assert result.stdout == b""
    assert b"Unknown user 'nobody'." in result.stderr


def test_without_a_user_only_endpoints_open_to_anonymous_callers_are_served(stdio_env: dict[str, str]) -> None:
    refused = run_stdio(stdio_env, b"", "--endpoint", "server")
    served = run_stdio(stdio_env, b"", "--endpoint", "conformance")

    assert refused.returncode == 1
    assert b"does not admit anonymous callers" in refused.stderr
    assert served.returncode == 0


def test_only_protocol_messages_reach_stdout() -> None:
    script = (
        "import logging, os, sys\n"
        "from mcp_django.transports.stdio import protect_stdout\n"
        "out = protect_stdout()\n"
        "print('a stray print')\n"
        "logging.basicConfig(stream=sys.stdout); logging.warning('a log line')\n"
        "os.system('echo a child process')\n"
        "out.write(b'{}\\n'); out.flush()\n"
    )

    result = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, timeout=PROCESS_TIMEOUT_S, check=True
    )

    assert result.stdout == b"{}\n"
    for text in (b"a stray print", b"a log line", b"a child process"):
        assert text in result.stderr


def stdio_server(env: dict[str, str], *args: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["manage.py", "mcp_stdio", *args], env=env, cwd=ROOT)


def text_of(result: Any) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent), block
    return block.text


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28", "auto"])
async def test_the_official_client_talks_to_the_command(stdio_env: dict[str, str], mode: str) -> None:
    server = stdio_server(stdio_env, "--endpoint", "server", "--user", "alice")
    async with Client(server, mode=mode, read_timeout_seconds=PROCESS_TIMEOUT_S) as session:
        tools = {tool.name for tool in (await session.list_tools()).tools}
        result = await session.call_tool("search_books", {"query": "Le Guin"})

    assert "search_books" in tools
    assert "The Dispossessed" in text_of(result)


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_tool_asks_the_official_client_for_a_sample_over_stdio(stdio_env: dict[str, str], mode: str) -> None:
    async def sample(context: Any, params: CreateMessageRequestParams) -> CreateMessageResult:
        return CreateMessageResult(role="assistant", content=TextContent(type="text", text="from stdio"), model="m")

    server = stdio_server(stdio_env, "--endpoint", "conformance")
    async with Client(server, mode=mode, read_timeout_seconds=PROCESS_TIMEOUT_S, sampling_callback=sample) as session:
        result = await session.call_tool("test_sampling", {"prompt": "Say something"})

    assert text_of(result) == "LLM response: from stdio"
