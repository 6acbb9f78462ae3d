"""Asking the client for input: server-to-client requests (handshake) and input_required results (2026)."""

from __future__ import annotations

import asyncio
import base64
from typing import Any

import pytest

from mcp_django.protocol import Connection, InvalidParams, MessageHandler
from mcp_django.protocol.inputs import RequestStateCodec
from tests.protocol.backends import EchoBackend
from tests.protocol.conftest import SERVER_INFO, request, stateless

ELICIT: dict[str, Any] = {"elicitation": {}}
ALL_CAPABILITIES: dict[str, Any] = {"elicitation": {}, "sampling": {}, "roots": {}}
ANSWER_ADA = {"action": "accept", "content": {"name": "Ada"}}


def call(name: str, *, capabilities: dict[str, Any] = ELICIT, request_id: int = 1, **extra: Any) -> dict[str, Any]:
    params = {"name": name, "arguments": {}, **extra}
    return stateless(
        "tools/call", params, request_id, meta={"io.modelcontextprotocol/clientCapabilities": capabilities}
    )


def alice() -> Connection:
    return Connection(version_header="2026-07-28", principal_id="alice")


# -- stateless: input_required ------------------------------------------------------------------------


async def test_a_question_without_an_answer_is_an_input_required_result(handler: MessageHandler) -> None:
    reply: Any = await handler.handle(call("ask_name"), alice())
    result = reply["result"]
    assert result["resultType"] == "input_required"
    assert result["inputRequests"] == {
        "user_name": {
            "method": "elicitation/create",
            "params": {
                "message": "What is your name?",
                "mode": "form",
                "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
            },
        }
    }
    assert isinstance(result["requestState"], str)
    assert "ttlMs" not in result


async def test_the_retry_with_the_answer_completes(handler: MessageHandler) -> None:
    first: Any = await handler.handle(call("ask_name"), alice())
    retry = call("ask_name", inputResponses={"user_name": ANSWER_ADA}, requestState=first["result"]["requestState"])
    reply: Any = await handler.handle(retry, alice())
    assert reply["result"]["resultType"] == "complete"
    assert reply["result"]["content"] == [{"type": "text", "text": "Hello, Ada!"}]


async def test_a_missing_answer_is_asked_again_not_an_error(handler: MessageHandler) -> None:
    first: Any = await handler.handle(call("ask_name"), alice())
    retry = call("ask_name", inputResponses={}, requestState=first["result"]["requestState"])
    reply: Any = await handler.handle(retry, alice())
    assert reply["result"]["resultType"] == "input_required"
    assert list(reply["result"]["inputRequests"]) == ["user_name"]


async def test_a_malformed_answer_is_asked_again(handler: MessageHandler) -> None:
    retry = call("ask_name", inputResponses={"user_name": {"roots": []}})
    reply: Any = await handler.handle(retry, alice())
    assert reply["result"]["resultType"] == "input_required"


async def test_an_answer_that_is_not_an_object_is_invalid_params(handler: MessageHandler) -> None:
    reply: Any = await handler.handle(call("ask_name", inputResponses={"user_name": 12345}), alice())
    assert reply["error"]["code"] == -32602


async def test_extra_answers_are_ignored(handler: MessageHandler) -> None:
    answers = {"user_name": ANSWER_ADA, "unrelated": {"action": "decline"}}
    reply: Any = await handler.handle(call("ask_name", inputResponses=answers), alice())
    assert reply["result"]["content"][0]["text"] == "Hello, Ada!"


async def test_several_rounds_carry_answers_and_state_forward(handler: MessageHandler) -> None:
    first: Any = await handler.handle(call("ask_twice"), alice())
    assert list(first["result"]["inputRequests"]) == ["step1"]
    second: Any = await handler.handle(
        call("ask_twice", inputResponses={"step1": ANSWER_ADA}, requestState=first["result"]["requestState"]), alice()
    )
    assert list(second["result"]["inputRequests"]) == ["step2"]
    assert second["result"]["requestState"] != first["result"]["requestState"]
    bob = {"action": "accept", "content": {"name": "Bob"}}
    third: Any = await handler.handle(
        call("ask_twice", inputResponses={"step2": bob}, requestState=second["result"]["requestState"]), alice()
    )
    assert third["result"]["content"][0]["text"] == "Ada+Bob after 3 rounds"


async def test_several_questions_go_out_in_one_round(handler: MessageHandler) -> None:
    reply: Any = await handler.handle(call("ask_all", capabilities=ALL_CAPABILITIES), alice())
    methods = {key: value["method"] for key, value in reply["result"]["inputRequests"].items()}
    assert methods == {
        "user_name": "elicitation/create",
        "greeting": "sampling/createMessage",
        "client_roots": "roots/list",
    }


async def test_a_capability_the_client_lacks_is_never_asked_for(handler: MessageHandler) -> None:
    reply: Any = await handler.handle(call("ask_name", capabilities={}), alice())
    assert reply["error"]["code"] == -32021
    assert reply["error"]["data"] == {"requiredCapabilities": {"elicitation": {}}}


@pytest.mark.parametrize(
    "tamper",
    [
        lambda state: state[:-2] + ("AA" if not state.endswith("AA") else "BB"),
        lambda state: "x" + state,
        lambda state: "not-a-state",
        lambda state: 42,
    ],
)
async def test_a_tampered_request_state_is_invalid_params(handler: MessageHandler, tamper: Any) -> None:
    first: Any = await handler.handle(call("ask_name"), alice())
    retry = call(
        "ask_name", inputResponses={"user_name": ANSWER_ADA}, requestState=tamper(first["result"]["requestState"])
    )
    reply: Any = await handler.handle(retry, alice())
    assert reply["error"]["code"] == -32602


async def test_a_request_state_is_bound_to_its_principal(handler: MessageHandler) -> None:
    first: Any = await handler.handle(call("ask_name"), alice())
    retry = call("ask_name", inputResponses={"user_name": ANSWER_ADA}, requestState=first["result"]["requestState"])
    reply: Any = await handler.handle(retry, Connection(version_header="2026-07-28", principal_id="mallory"))
    assert reply["error"] == {"code": -32602, "message": "Invalid requestState: it was issued for another request"}


async def test_a_request_state_is_bound_to_its_arguments(handler: MessageHandler) -> None:
    first: Any = await handler.handle(call("ask_name"), alice())
    retry = call("ask_name", inputResponses={"user_name": ANSWER_ADA}, requestState=first["result"]["requestState"])
    retry["params"]["arguments"] = {"other": True}
    reply: Any = await handler.handle(retry, alice())
    assert reply["error"]["code"] == -32602


async def test_an_expired_request_state_is_invalid_params() -> None:
    handler = MessageHandler(EchoBackend(), server_info=SERVER_INFO, state_codec=RequestStateCodec(ttl_seconds=-1))
    first: Any = await handler.handle(call("ask_name"), alice())
    retry = call("ask_name", inputResponses={"user_name": ANSWER_ADA}, requestState=first["result"]["requestState"])
    reply: Any = await handler.handle(retry, alice())
    assert reply["error"] == {"code": -32602, "message": "Invalid requestState: it has expired"}


async def test_a_state_minted_with_another_key_is_rejected(handler: MessageHandler) -> None:
    other = MessageHandler(EchoBackend(), server_info=SERVER_INFO, state_codec=RequestStateCodec(b"k" * 32))
    first: Any = await other.handle(call("ask_name"), alice())
    retry = call("ask_name", inputResponses={"user_name": ANSWER_ADA}, requestState=first["result"]["requestState"])
    reply: Any = await handler.handle(retry, alice())
    assert reply["error"]["code"] == -32602


async def test_a_request_state_does_not_show_the_answers_it_carries(handler: MessageHandler) -> None:
    first: Any = await handler.handle(call("ask_twice"), alice())
    second: Any = await handler.handle(
        call("ask_twice", inputResponses={"step1": ANSWER_ADA}, requestState=first["result"]["requestState"]), alice()
    )
    state = second["result"]["requestState"]

    decoded = b"".join(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)) for part in state.split("."))

    assert b"Ada" not in decoded
    assert b"step1" not in decoded
    assert b"alice" not in decoded


def test_a_state_opens_with_a_fallback_key_while_the_key_is_rotated() -> None:
    old, new = b"o" * 32, b"n" * 32
    state = RequestStateCodec(old).mint("binding", {"answers": {"x": 1}})

    rotated = RequestStateCodec(new, fallback_keys=[old])
    forgotten = RequestStateCodec(new)

    assert rotated.open(state, "binding") == {"answers": {"x": 1}}
    with pytest.raises(InvalidParams):
        forgotten.open(state, "binding")


async def test_methods_that_may_not_ask_fail_as_internal_errors(handler: MessageHandler) -> None:
    message = stateless("tools/list", meta={"ask": True, "io.modelcontextprotocol/clientCapabilities": ELICIT})
    reply: Any = await handler.handle(message, alice())
    assert reply["error"] == {"code": -32603, "message": "Internal error"}


# -- handshake: server-to-client requests ---------------------------------------------------------------


async def _open_session(handler: MessageHandler, capabilities: dict[str, Any]) -> Connection:
    connection = Connection()
    init = {"protocolVersion": "2025-11-25", "capabilities": capabilities, "clientInfo": {"name": "c", "version": "1"}}
    await handler.handle(request("initialize", init), connection)
    assert connection.session is not None
    connection.session.session_id = "session-1"
    return connection


async def test_a_question_goes_out_on_the_stream_and_the_answer_comes_back(handler: MessageHandler) -> None:
    connection = await _open_session(handler, ELICIT)
    stream = handler.stream(request("tools/call", {"name": "ask_name", "arguments": {}}, request_id=5), connection)
    outgoing = await anext(stream)
    assert outgoing["method"] == "elicitation/create"
    assert outgoing["params"]["message"] == "What is your name?"
    answer = {"jsonrpc": "2.0", "id": outgoing["id"], "result": ANSWER_ADA}
    assert await handler.handle(answer, connection) is None
    final = await anext(stream)
    assert final["id"] == 5
    assert final["result"]["content"] == [{"type": "text", "text": "Hello, Ada!"}]


async def test_several_questions_are_asked_at_once(handler: MessageHandler) -> None:
    connection = await _open_session(handler, ALL_CAPABILITIES)
    stream = handler.stream(request("tools/call", {"name": "ask_all", "arguments": {}}), connection)
    asked = [await anext(stream) for _ in range(3)]
    replies = {
        "elicitation/create": ANSWER_ADA,
        "sampling/createMessage": {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"},
        "roots/list": {"roots": []},
    }
    for question in asked:
        await handler.handle(
            {"jsonrpc": "2.0", "id": question["id"], "result": replies[question["method"]]}, connection
        )
    final = await anext(stream)
    assert final["result"]["content"][0]["text"] == "client_roots,greeting,user_name"


async def test_a_question_without_params_goes_out_without_params(handler: MessageHandler) -> None:
    connection = await _open_session(handler, ALL_CAPABILITIES)
    stream = handler.stream(request("tools/call", {"name": "ask_roots", "arguments": {}}), connection)
    asked = await anext(stream)
    assert asked["method"] == "roots/list"
    assert "params" not in asked
    roots = {"roots": [{"uri": "file:///work", "name": "work"}]}
    await handler.handle({"jsonrpc": "2.0", "id": asked["id"], "result": roots}, connection)
    final = await anext(stream)
    assert final["result"]["content"] == [{"type": "text", "text": "file:///work"}]


async def test_an_error_answer_becomes_a_tool_error(handler: MessageHandler) -> None:
    connection = await _open_session(handler, ELICIT)
    stream = handler.stream(request("tools/call", {"name": "ask_name", "arguments": {}}), connection)
    outgoing = await anext(stream)
    await handler.handle(
        {"jsonrpc": "2.0", "id": outgoing["id"], "error": {"code": -1, "message": "user said no"}}, connection
    )
    final = await anext(stream)
    assert final["result"]["isError"] is True


async def test_an_answer_from_another_session_is_not_delivered(handler: MessageHandler) -> None:
    connection = await _open_session(handler, ELICIT)
    intruder = await _open_session(handler, ELICIT)
    assert intruder.session is not None
    intruder.session.session_id = "session-2"
    stream = handler.stream(request("tools/call", {"name": "ask_name", "arguments": {}}), connection)
    outgoing = await anext(stream)
    await handler.handle({"jsonrpc": "2.0", "id": outgoing["id"], "result": ANSWER_ADA}, intruder)
    assert not (await asyncio.wait([asyncio.ensure_future(anext(stream))], timeout=0.05))[0]


async def test_an_unanswered_question_times_out_and_is_cancelled() -> None:
    handler = MessageHandler(EchoBackend(), server_info=SERVER_INFO, client_request_timeout=0.01)
    connection = await _open_session(handler, ELICIT)
    messages = [
        m async for m in handler.stream(request("tools/call", {"name": "ask_name", "arguments": {}}), connection)
    ]
    assert [m.get("method") for m in messages] == ["elicitation/create", "notifications/cancelled", None]
    assert messages[1]["params"] == {"requestId": messages[0]["id"], "reason": "timeout"}
    assert messages[2]["result"]["isError"] is True


async def test_a_capability_the_session_lacks_is_never_asked_for(handler: MessageHandler) -> None:
    connection = await _open_session(handler, {})
    messages = [
        m async for m in handler.stream(request("tools/call", {"name": "ask_name", "arguments": {}}), connection)
    ]
    assert len(messages) == 1
    assert messages[0]["error"]["code"] == -32021


async def test_without_a_stream_a_handshake_request_cannot_ask(handler: MessageHandler) -> None:
    connection = await _open_session(handler, ELICIT)
    reply: Any = await handler.handle(request("tools/call", {"name": "ask_name", "arguments": {}}), connection)
    assert reply["result"]["isError"] is True


class SharedRelay:
    """Two handlers standing for two worker processes, joined the way a channel layer joins them."""

    def __init__(self) -> None:
        self.watching: dict[str, Any] = {}
        self.forwarded = 0

    async def watch(self, request_id: str, deliver: Any) -> None:
        self.watching[request_id] = deliver

    async def unwatch(self, request_id: str) -> None:
        self.watching.pop(request_id, None)

    async def forward(self, message: dict[str, Any], owner: str | None) -> None:
        self.forwarded += 1
        deliver = self.watching.get(message["id"])
        if deliver is not None:
            deliver(message, owner)


async def test_an_answer_posted_to_another_worker_reaches_the_waiting_tool() -> None:
    relay = SharedRelay()
    worker_a = MessageHandler(EchoBackend(), server_info=SERVER_INFO, relay=relay)
    worker_b = MessageHandler(EchoBackend(), server_info=SERVER_INFO, relay=relay)
    on_a = await _open_session(worker_a, ELICIT)
    on_b = Connection(session=on_a.session)  # the same session, resumed by the other worker
    stream = worker_a.stream(request("tools/call", {"name": "ask_name", "arguments": {}}, request_id=8), on_a)
    outgoing = await anext(stream)
    assert outgoing["id"] in relay.watching

    assert await worker_b.handle({"jsonrpc": "2.0", "id": outgoing["id"], "result": ANSWER_ADA}, on_b) is None

    final = await anext(stream)
    assert final["result"]["content"][0]["text"] == "Hello, Ada!"
    assert relay.forwarded == 1
    assert relay.watching == {}


async def test_an_answer_this_worker_waits_for_is_not_forwarded() -> None:
    relay = SharedRelay()
    handler = MessageHandler(EchoBackend(), server_info=SERVER_INFO, relay=relay)
    connection = await _open_session(handler, ELICIT)
    stream = handler.stream(request("tools/call", {"name": "ask_name", "arguments": {}}), connection)
    outgoing = await anext(stream)
    await handler.handle({"jsonrpc": "2.0", "id": outgoing["id"], "result": ANSWER_ADA}, connection)
    assert (await anext(stream))["result"]["content"][0]["text"] == "Hello, Ada!"
    assert relay.forwarded == 0
