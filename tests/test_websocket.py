"""The WebSocket transport, driven through Channels' `WebsocketCommunicator`."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser, User
from django.test import override_settings
from rest_framework.authtoken.models import Token

from mcp_django import Context, Registry
from mcp_django.endpoints import Endpoint
from mcp_django.models import ToolState
from mcp_django.protocol import MessageHandler
from mcp_django.routing import websocket_endpoint
from mcp_django.runtime.notifications import send_notification

# Channels closes stale database connections around every message it dispatches.
pytestmark = pytest.mark.django_db(transaction=True)

registry = Registry("websocket-tests")
NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
gates: dict[str, asyncio.Event] = {}
"""Events the `wait` tool waits on, set by the tests (created inside each test's event loop)."""
started: dict[str, asyncio.Event] = {}
"""Set by the `wait` tool once it runs."""
stopped: dict[str, asyncio.Event] = {}
"""Set by the `wait` tool when it is cancelled."""


@registry.tool
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@registry.tool
async def wait(gate: str) -> str:
    """Finish once the test opens the gate."""
    started[gate].set()
    try:
        await gates[gate].wait()
    except asyncio.CancelledError:
        stopped[gate].set()
        raise
    return f"{gate} opened"


@registry.tool
async def count(ctx: Context, steps: int = 3) -> str:
    """Report progress `steps` times, then finish."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps)
    return f"counted to {steps}"


@registry.tool
def whoami(ctx: Context) -> str:
    """Name the caller."""
    return str(ctx.user)


@registry.tool
async def greet(ctx: Context) -> str:
    """Ask the user's name, then greet them."""
    answer = await ctx.elicit("Your name?", NAME_SCHEMA)
    return f"Hello {answer['content']['name']}"


@registry.resource("test://greeting", name="greeting", mime_type="text/plain")
def greeting() -> str:
    """A fixed greeting."""
    return "hello"


class ListeningEndpoint(Endpoint):
    """An endpoint whose core serves `subscriptions/listen` (the deployment delivers notifications)."""

    def build_handler(self) -> MessageHandler:
        return MessageHandler(
            self.build_backend(), server_info={"name": "ws-tests", "version": "1"}, notifications=True
        )


OPEN = Endpoint("ws-tests/mcp", registry=registry, name="ws-tests", allow_anonymous=True)
PRIVATE = Endpoint("ws-private/mcp", registry=registry, name="ws-private")
LISTENING = ListeningEndpoint("ws-listening/mcp", registry=registry, name="ws-listening", allow_anonymous=True)
application = URLRouter(
    [
        *websocket_endpoint("ws/mcp", endpoint=OPEN),
        *websocket_endpoint("ws/private", endpoint=PRIVATE),
        *websocket_endpoint("ws/listening", endpoint=LISTENING),
    ]
)

STATELESS_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
STATELESS_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def open_gate(name: str) -> None:
    gates[name], started[name], stopped[name] = asyncio.Event(), asyncio.Event(), asyncio.Event()


async def until(event: asyncio.Event) -> None:
    await asyncio.wait_for(event.wait(), timeout=2)


def request(method: str, params: dict[str, Any] | None = None, id: int | str = 1) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def stateless(method: str, params: dict[str, Any] | None = None, id: int | str = 1) -> dict[str, Any]:
    return request(method, {**(params or {}), "_meta": STATELESS_META}, id)


def communicator(
    path: str = "/ws/mcp",
    *,
    user: Any = None,
    subprotocols: list[str] | None = None,
    headers: list[tuple[bytes, bytes]] | None = None,
) -> WebsocketCommunicator:
    socket = WebsocketCommunicator(
        application, path, headers=headers, subprotocols=["mcp"] if subprotocols is None else subprotocols
    )
    socket.scope["user"] = user if user is not None else AnonymousUser()
    return socket


@pytest.fixture
async def socket() -> AsyncIterator[WebsocketCommunicator]:
    """A connected socket to the open endpoint, closed after the test."""
    connected = communicator()
    accepted, subprotocol = await connected.connect()
    assert accepted
    assert subprotocol == "mcp"
    yield connected
    await connected.disconnect()


async def initialize(socket: WebsocketCommunicator, capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
    await socket.send_json_to(
        request(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": capabilities or {},
                "clientInfo": {"name": "t", "version": "1"},
            },
            id="init",
        )
    )
    reply: dict[str, Any] = await socket.receive_json_from()
    await socket.send_json_to({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return reply


async def test_the_socket_speaks_the_mcp_subprotocol(socket: WebsocketCommunicator) -> None:
    await socket.send_json_to(stateless("tools/call", {"name": "echo", "arguments": {"text": "hi"}}))

    reply = await socket.receive_json_from()

    assert reply["id"] == 1
    assert reply["result"]["content"] == [{"type": "text", "text": "hi"}]


async def test_a_client_that_does_not_offer_the_mcp_subprotocol_is_refused() -> None:
    refused = communicator(subprotocols=["graphql-ws"])

    accepted, _ = await refused.connect()

    assert not accepted


async def test_the_handshake_session_lives_as_long_as_the_socket(socket: WebsocketCommunicator) -> None:
    opened = await initialize(socket)
    await socket.send_json_to(request("logging/setLevel", {"level": "error"}, id=2))
    level_set = await socket.receive_json_from()
    await socket.send_json_to(request("tools/call", {"name": "echo", "arguments": {"text": "again"}}, id=3))
    called = await socket.receive_json_from()

    assert opened["result"]["protocolVersion"] == "2025-11-25"
    assert level_set == {"jsonrpc": "2.0", "id": 2, "result": {}}
    assert called["result"]["content"] == [{"type": "text", "text": "again"}]
    assert "resultType" not in called["result"]  # served in the handshake era


async def test_stateless_messages_are_served_without_a_handshake(socket: WebsocketCommunicator) -> None:
    await socket.send_json_to(stateless("server/discover"))
    discovered = await socket.receive_json_from()
    await socket.send_json_to(stateless("resources/read", {"uri": "test://greeting"}, id=2))
    read = await socket.receive_json_from()

    assert "2026-07-28" in discovered["result"]["supportedVersions"]
    assert read["result"]["resultType"] == "complete"
    assert read["result"]["contents"][0]["text"] == "hello"


async def test_a_slow_request_does_not_hold_up_a_later_one(socket: WebsocketCommunicator) -> None:
    open_gate("slow")
    await initialize(socket)

    await socket.send_json_to(request("tools/call", {"name": "wait", "arguments": {"gate": "slow"}}, id="slow"))
    await socket.send_json_to(request("ping", id="ping"))
    first = await socket.receive_json_from()
    gates["slow"].set()
    second = await socket.receive_json_from()

    assert first == {"jsonrpc": "2.0", "id": "ping", "result": {}}
    assert second["id"] == "slow"
    assert second["result"]["content"] == [{"type": "text", "text": "slow opened"}]


async def test_a_request_s_notifications_go_out_before_its_response(socket: WebsocketCommunicator) -> None:
    params = {"name": "count", "arguments": {"steps": 3}, "_meta": {**STATELESS_META, "progressToken": "p"}}
    await socket.send_json_to(request("tools/call", params, id=7))

    frames = [await socket.receive_json_from() for _ in range(4)]

    assert [frame["params"]["progress"] for frame in frames[:3]] == [1, 2, 3]
    assert all(frame["method"] == "notifications/progress" for frame in frames[:3])
    assert frames[3]["id"] == 7
    assert frames[3]["result"]["content"] == [{"type": "text", "text": "counted to 3"}]


async def test_a_tool_asks_the_handshake_client_over_the_socket(socket: WebsocketCommunicator) -> None:
    await initialize(socket, {"elicitation": {}})
    await socket.send_json_to(request("tools/call", {"name": "greet", "arguments": {}}, id="call"))

    asked = await socket.receive_json_from()
    await socket.send_json_to(
        {"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "accept", "content": {"name": "Ada"}}}
    )
    reply = await socket.receive_json_from()

    assert asked["method"] == "elicitation/create"
    assert asked["params"]["message"] == "Your name?"
    assert reply["id"] == "call"
    assert reply["result"]["content"] == [{"type": "text", "text": "Hello Ada"}]


async def test_a_stateless_tool_that_needs_input_answers_input_required(socket: WebsocketCommunicator) -> None:
    params = {
        "name": "greet",
        "arguments": {},
        "_meta": {**STATELESS_META, STATELESS_CAPABILITIES: {"elicitation": {}}},
    }
    await socket.send_json_to(request("tools/call", params))

    reply = await socket.receive_json_from()

    assert reply["result"]["resultType"] == "input_required"
    assert [r["method"] for r in reply["result"]["inputRequests"].values()] == ["elicitation/create"]


async def test_a_batch_before_initialize_is_refused_as_over_http(socket: WebsocketCommunicator) -> None:
    await socket.send_json_to([request("tools/call", {"name": "echo", "arguments": {"text": "x"}}, id=1)])

    reply = await socket.receive_json_from()

    assert reply["error"]["code"] == -32600
    assert reply["id"] is None


async def test_a_batch_is_served_in_a_2025_03_26_session(socket: WebsocketCommunicator) -> None:
    await socket.send_json_to(
        request(
            "initialize",
            {"protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
        )
    )
    await socket.receive_json_from()
    await socket.send_json_to({"jsonrpc": "2.0", "method": "notifications/initialized"})

    await socket.send_json_to([request("ping", id=2), request("ping", id=3)])
    reply = await socket.receive_json_from()

    assert sorted(item["id"] for item in reply) == [2, 3]


async def test_text_that_is_not_json_gets_a_parse_error_and_the_socket_stays_open(
    socket: WebsocketCommunicator,
) -> None:
    await socket.send_to(text_data="{not json")
    error = await socket.receive_json_from()
    await socket.send_json_to(stateless("tools/call", {"name": "echo", "arguments": {"text": "still here"}}))
    reply = await socket.receive_json_from()

    assert error["id"] is None
    assert error["error"]["code"] == -32700
    assert reply["result"]["content"] == [{"type": "text", "text": "still here"}]


async def test_a_binary_frame_gets_an_error_frame(socket: WebsocketCommunicator) -> None:
    await socket.send_to(bytes_data=json.dumps(stateless("server/discover")).encode())

    error = await socket.receive_json_from()

    assert error["error"] == {"code": -32600, "message": "Invalid request: send JSON-RPC messages as text frames"}


async def test_a_frame_over_max_request_bytes_is_refused_and_the_socket_stays_open(
    socket: WebsocketCommunicator,
) -> None:
    with override_settings(MCP_DJANGO={"MAX_REQUEST_BYTES": 300}):
        await socket.send_json_to(stateless("tools/call", {"name": "echo", "arguments": {"text": "x" * 400}}))
        error = await socket.receive_json_from()
        await socket.send_json_to(stateless("tools/call", {"name": "echo", "arguments": {"text": "short"}}, id=2))
        reply = await socket.receive_json_from()

    assert error["error"] == {"code": -32600, "message": "Request too large: a message may have at most 300 bytes"}
    assert reply["id"] == 2


async def test_a_cancelled_request_sends_nothing_more(socket: WebsocketCommunicator) -> None:
    open_gate("cancelled")
    await socket.send_json_to(stateless("tools/call", {"name": "wait", "arguments": {"gate": "cancelled"}}, id=9))
    await until(started["cancelled"])

    await socket.send_json_to(
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9, "reason": "changed my mind"}}
    )
    await until(stopped["cancelled"])
    gates["cancelled"].set()

    assert await socket.receive_nothing()


async def test_an_anonymous_caller_is_refused_on_a_private_endpoint() -> None:
    anonymous = communicator("/ws/private")

    accepted, _ = await anonymous.connect()

    assert not accepted


async def test_the_caller_is_the_socket_s_user() -> None:
    alice = communicator("/ws/private", user=await User.objects.acreate(username="alice"))
    accepted, _ = await alice.connect()
    await alice.send_json_to(stateless("tools/call", {"name": "whoami", "arguments": {}}))

    reply = await alice.receive_json_from()
    await alice.disconnect()

    assert accepted
    assert reply["result"]["content"] == [{"type": "text", "text": "alice"}]


async def test_a_bearer_token_in_the_handshake_authenticates_the_caller() -> None:
    alice = await User.objects.acreate(username="alice")
    token = await Token.objects.acreate(user=alice)
    with_token = communicator("/ws/private", headers=[(b"authorization", f"Bearer {token.key}".encode())])
    with_bad_token = communicator("/ws/private", headers=[(b"authorization", b"Bearer not-a-token")])

    accepted, _ = await with_token.connect()
    await with_token.send_json_to(stateless("tools/call", {"name": "whoami", "arguments": {}}))
    reply = await with_token.receive_json_from()
    await with_token.disconnect()
    bad_accepted, _ = await with_bad_token.connect()

    assert accepted
    assert reply["result"]["content"] == [{"type": "text", "text": "alice"}]
    assert not bad_accepted


async def test_a_foreign_origin_is_refused_and_localhost_is_admitted() -> None:
    foreign = communicator(headers=[(b"origin", b"https://evil.example")])
    local = communicator(headers=[(b"origin", b"http://localhost:3000")])

    foreign_accepted, _ = await foreign.connect()
    local_accepted, _ = await local.connect()
    await local.disconnect()

    assert not foreign_accepted
    assert local_accepted


@override_settings(
    CSRF_TRUSTED_ORIGINS=["https://app.example.com"],
    MCP_DJANGO={"ALLOWED_ORIGINS": ["http://testserver", "https://app.example.com", "https://other.example"]},
)
async def test_a_cookie_user_s_socket_must_come_from_the_site_or_a_csrf_trusted_origin() -> None:
    alice = await User.objects.acreate(username="alice")

    def from_origin(origin: bytes) -> WebsocketCommunicator:
        return communicator("/ws/private", user=alice, headers=[(b"host", b"testserver"), (b"origin", origin)])

    verdicts = {}
    for origin in (
        b"http://localhost:3000",
        b"http://testserver",
        b"https://app.example.com",
        b"https://other.example",
    ):
        socket = from_origin(origin)
        verdicts[origin], _ = await socket.connect()
        await socket.disconnect()

    # ALLOWED_ORIGINS admits all four for token callers; a cookie also needs the CSRF rule.
    assert verdicts == {
        b"http://localhost:3000": False,
        b"http://testserver": True,
        b"https://app.example.com": True,
        b"https://other.example": False,
    }


async def test_server_notifications_reach_initialized_sockets_only(socket: WebsocketCommunicator) -> None:
    stateless_only = communicator()
    await stateless_only.connect()
    await initialize(socket)
    await socket.send_json_to(request("ping", id="sync"))  # the initialized notification is served by now
    await socket.receive_json_from()

    sent = await send_notification(OPEN, "notifications/tools/list_changed")

    assert sent
    assert await socket.receive_json_from() == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
    assert await stateless_only.receive_nothing()
    await stateless_only.disconnect()


async def test_resource_updates_reach_only_subscribed_sockets(socket: WebsocketCommunicator) -> None:
    await initialize(socket)
    await socket.send_json_to(request("resources/subscribe", {"uri": "test://greeting"}, id="sub"))
    await socket.receive_json_from()

    await send_notification("ws-tests", "notifications/resources/updated", {"uri": "test://other"})
    await send_notification("ws-tests", "notifications/resources/updated", {"uri": "test://greeting"})

    update = await socket.receive_json_from()
    assert update["params"] == {"uri": "test://greeting"}
    assert await socket.receive_nothing()


async def test_a_stateless_client_listens_for_notifications_over_the_socket() -> None:
    listener = communicator("/ws/listening")
    await listener.connect()
    await listener.send_json_to(
        stateless("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, id="l")
    )
    acknowledged = await listener.receive_json_from()

    await send_notification(LISTENING, "notifications/prompts/list_changed")  # not asked for
    await send_notification(LISTENING, "notifications/tools/list_changed")
    changed = await listener.receive_json_from()
    await listener.send_json_to({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "l"}})
    nothing_more = await listener.receive_nothing()
    await listener.disconnect()

    assert acknowledged["method"] == "notifications/subscriptions/acknowledged"
    assert acknowledged["params"]["notifications"] == {"toolsListChanged": True}
    assert changed["method"] == "notifications/tools/list_changed"
    assert changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "l"
    assert nothing_more


async def test_closing_the_socket_cancels_its_requests() -> None:
    open_gate("closed")
    closing = communicator()
    await closing.connect()
    await closing.send_json_to(stateless("tools/call", {"name": "wait", "arguments": {"gate": "closed"}}))
    await until(started["closed"])

    await closing.disconnect()

    await until(stopped["closed"])


async def test_the_example_project_serves_its_endpoints_over_websocket_by_name() -> None:
    from example_project.asgi import application as example

    conformance = WebsocketCommunicator(example, "/ws/conformance/mcp", subprotocols=["mcp"])
    server = WebsocketCommunicator(example, "/ws/mcp/", subprotocols=["mcp"])

    accepted, _ = await conformance.connect()
    await conformance.send_json_to(stateless("tools/call", {"name": "test_simple_text", "arguments": {}}))
    reply = await conformance.receive_json_from()
    await conformance.disconnect()
    server_accepted, _ = await server.connect()  # anonymous callers may not use the server endpoint

    assert accepted
    assert reply["result"]["content"][0]["type"] == "text"
    assert not server_accepted


async def test_an_open_socket_follows_a_tool_switched_off_and_on_in_the_admin(socket: WebsocketCommunicator) -> None:
    await socket.send_json_to(stateless("tools/list", id=1))
    before = await socket.receive_json_from()

    await ToolState.objects.acreate(name="echo", enabled=False)  # what the admin's switch saves
    await socket.send_json_to(stateless("tools/list", id=2))
    after = await socket.receive_json_from()
    await socket.send_json_to(stateless("tools/call", {"name": "echo", "arguments": {"text": "hi"}}, id=3))
    called = await socket.receive_json_from()

    assert "echo" in {tool["name"] for tool in before["result"]["tools"]}
    assert "echo" not in {tool["name"] for tool in after["result"]["tools"]}
    assert called["error"]["message"] == "Unknown tool: echo"

    await ToolState.objects.filter(name="echo").adelete()  # switched on again (and this process's state with it)
    await socket.send_json_to(stateless("tools/list", id=4))
    again = await socket.receive_json_from()
    assert "echo" in {tool["name"] for tool in again["result"]["tools"]}
