"""Server notifications: `subscriptions/listen` (2026) and the filter handshake sessions use."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from mcp_django.protocol import Connection, MessageHandler
from mcp_django.protocol.context import SessionState
from mcp_django.protocol.features.resources import MAX_SUBSCRIPTIONS
from mcp_django.protocol.features.subscriptions import wanted_by_session
from tests.protocol.backends import EchoBackend
from tests.protocol.conftest import SERVER_INFO, request, stateless

TOOLS_CHANGED = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
PROMPTS_CHANGED = {"jsonrpc": "2.0", "method": "notifications/prompts/list_changed"}
UPDATED_A = {"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "test://a"}}
UPDATED_B = {"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "test://b"}}
SUB = "io.modelcontextprotocol/subscriptionId"


class Broadcast:
    """A notification source fed by the test: every `open()` gets what is published after it."""

    def __init__(self) -> None:
        self.queues: list[asyncio.Queue[dict[str, Any] | None]] = []

    async def open(self) -> AsyncIterator[dict[str, Any]]:
        queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self.queues.append(queue)  # subscribed before the caller gets the iterator
        return self._drain(queue)

    @staticmethod
    async def _drain(queue: asyncio.Queue[dict[str, Any] | None]) -> AsyncIterator[dict[str, Any]]:
        while (note := await queue.get()) is not None:
            yield note

    def publish(self, note: dict[str, Any] | None) -> None:
        for queue in self.queues:
            queue.put_nowait(note)


@pytest.fixture
def live() -> MessageHandler:
    return MessageHandler(EchoBackend(), server_info=SERVER_INFO, notifications=True)


async def test_list_changed_and_subscriptions_are_advertised_when_notifications_can_flow(live: MessageHandler) -> None:
    reply: Any = await live.handle(stateless("server/discover"), Connection())
    capabilities = reply["result"]["capabilities"]
    assert capabilities["tools"] == {"listChanged": True}
    assert capabilities["prompts"] == {"listChanged": True}
    assert capabilities["resources"] == {"listChanged": True, "subscribe": True}


class Unsubscribable(EchoBackend):
    """Resources nobody can subscribe to here (a remote server's: subscriptions are not forwarded)."""

    def capabilities(self) -> dict[str, Any]:
        return {**super().capabilities(), "resources": {"subscribe": False}}


async def test_resources_a_backend_says_cannot_be_subscribed_to_are_advertised_without_subscribe() -> None:
    handler = MessageHandler(Unsubscribable(), server_info=SERVER_INFO, notifications=True)
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}

    discovered: Any = await handler.handle(stateless("server/discover"), Connection())
    initialized: Any = await handler.handle(request("initialize", init), Connection(sessions=False))

    assert discovered["result"]["capabilities"]["resources"] == {"listChanged": True}
    assert initialized["result"]["capabilities"]["resources"] == {"listChanged": True}


async def test_without_notifications_listen_does_not_exist(handler: MessageHandler) -> None:
    params = {"notifications": {"toolsListChanged": True}}
    reply: Any = await handler.handle(stateless("subscriptions/listen", params), Connection())
    assert reply["error"]["code"] == -32601


async def _listen(handler: MessageHandler, source: Broadcast, wanted: dict[str, Any], request_id: int = 77) -> Any:
    connection = Connection(notifications=source.open)
    return handler.stream(stateless("subscriptions/listen", {"notifications": wanted}, request_id), connection)


async def test_the_stream_opens_with_an_acknowledgement_of_what_is_honoured(live: MessageHandler) -> None:
    source = Broadcast()
    stream = await _listen(live, source, {"toolsListChanged": True, "resourceSubscriptions": ["test://a"], "x": 1})
    ack = await anext(stream)
    assert ack == {
        "jsonrpc": "2.0",
        "method": "notifications/subscriptions/acknowledged",
        "params": {
            "notifications": {"toolsListChanged": True, "resourceSubscriptions": ["test://a"]},
            "_meta": {SUB: 77},
        },
    }
    await stream.aclose()


async def test_only_requested_kinds_arrive_each_tagged_with_the_subscription(live: MessageHandler) -> None:
    source = Broadcast()
    stream = await _listen(live, source, {"promptsListChanged": True, "resourceSubscriptions": ["test://a"]})
    await anext(stream)
    assert len(source.queues) == 1  # subscribed by the time the acknowledgement arrived
    for note in (TOOLS_CHANGED, UPDATED_B, PROMPTS_CHANGED, UPDATED_A):
        source.publish(note)
    first, second = await anext(stream), await anext(stream)
    assert first["method"] == "notifications/prompts/list_changed"
    assert first["params"]["_meta"] == {SUB: 77}
    assert second["params"] == {"uri": "test://a", "_meta": {SUB: 77}}
    await stream.aclose()


async def test_a_source_that_ends_closes_the_subscription_with_a_result(live: MessageHandler) -> None:
    source = Broadcast()
    stream = await _listen(live, source, {"toolsListChanged": True})
    await anext(stream)
    source.publish(None)
    final = await anext(stream)
    assert final["id"] == 77
    assert final["result"]["resultType"] == "complete"
    assert final["result"]["_meta"][SUB] == 77


async def test_features_the_server_lacks_are_not_honoured() -> None:
    handler = MessageHandler(EchoBackend(features=("tools",)), server_info=SERVER_INFO, notifications=True)
    stream = await _listen(handler, Broadcast(), {"promptsListChanged": True, "toolsListChanged": True})
    ack = await anext(stream)
    assert ack["params"]["notifications"] == {"toolsListChanged": True}
    await stream.aclose()


async def test_listen_does_not_exist_in_the_handshake_era(live: MessageHandler) -> None:
    connection = Connection(sessions=False)
    reply: Any = await live.handle(request("subscriptions/listen", {"notifications": {}}), connection)
    assert reply["error"]["code"] == -32601


@pytest.mark.parametrize(
    ("note", "wanted"),
    [(TOOLS_CHANGED, True), (PROMPTS_CHANGED, False), (UPDATED_A, True), (UPDATED_B, False), ({"method": "x"}, False)],
)
def test_a_session_gets_list_changes_of_its_features_and_updates_it_subscribed_to(note: Any, wanted: bool) -> None:
    assert wanted_by_session(note, subscriptions={"test://a"}, features={"tools", "resources"}) is wanted


def hiding(*uris: str) -> tuple[EchoBackend, MessageHandler]:
    backend = EchoBackend()
    backend.hidden.update(uris)
    return backend, MessageHandler(backend, server_info=SERVER_INFO, notifications=True)


async def test_a_listen_leaves_out_what_the_caller_cannot_read_as_it_does_what_nothing_serves() -> None:
    _, handler = hiding("test://a")
    stream = await _listen(handler, Broadcast(), {"toolsListChanged": True, "resourceSubscriptions": ["test://a"]})
    ack = await anext(stream)
    _, open_handler = hiding()
    unknown = await _listen(open_handler, Broadcast(), {"toolsListChanged": True, "resourceSubscriptions": ["x://y"]})
    unknown_ack = await anext(unknown)

    assert ack["params"]["notifications"] == unknown_ack["params"]["notifications"] == {"toolsListChanged": True}
    await stream.aclose()
    await unknown.aclose()


async def test_a_listen_stops_delivering_updates_the_caller_can_no_longer_read() -> None:
    backend, handler = hiding()
    source = Broadcast()
    stream = await _listen(handler, source, {"promptsListChanged": True, "resourceSubscriptions": ["test://a"]})
    await anext(stream)

    backend.hidden.add("test://a")  # the caller's scope was lowered, or the resource switched off
    source.publish(UPDATED_A)
    source.publish(PROMPTS_CHANGED)
    delivered = await asyncio.wait_for(anext(stream), 5)

    assert delivered["method"] == "notifications/prompts/list_changed"
    await stream.aclose()


async def test_subscribing_to_what_the_caller_cannot_read_answers_as_for_an_unknown_resource() -> None:
    _, handler = hiding("test://a")
    session = Connection(session=SessionState(protocol_version="2025-11-25", initialized=True))

    hidden: Any = await handler.handle(request("resources/subscribe", {"uri": "test://a"}), session)
    unknown: Any = await handler.handle(request("resources/subscribe", {"uri": "test://nowhere"}), session)

    assert hidden["error"]["code"] == unknown["error"]["code"] == -32002
    assert hidden["error"]["message"] == "Resource not found: test://a"
    assert session.session is not None
    assert session.session.subscriptions == ()


async def test_a_session_stops_hearing_updates_it_can_no_longer_read() -> None:
    backend, handler = hiding()
    session = Connection(session=SessionState(protocol_version="2025-11-25", initialized=True))
    await handler.handle(request("resources/subscribe", {"uri": "test://a"}), session)

    before = await handler.delivers(UPDATED_A, session)
    backend.hidden.add("test://a")
    after = await handler.delivers(UPDATED_A, session)

    assert (before, after) == (True, False)


async def test_a_session_subscribes_to_a_bounded_number_of_resources() -> None:
    _, handler = hiding()
    session = Connection(session=SessionState(protocol_version="2025-11-25", initialized=True))
    for number in range(MAX_SUBSCRIPTIONS):
        await handler.handle(request("resources/subscribe", {"uri": f"test://t/{number}"}), session)

    refused: Any = await handler.handle(request("resources/subscribe", {"uri": "test://t/one-more"}), session)

    assert refused["error"]["code"] == -32602
    assert session.session is not None
    assert len(session.session.subscriptions) == MAX_SUBSCRIPTIONS
