"""The operation hook wraps every operation on the backend, and nothing else."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_django.protocol import CallNext, Connection, InvalidParams, MessageHandler, RequestContext
from tests.protocol.backends import EchoBackend
from tests.protocol.conftest import SERVER_INFO, request, stateless


class RecordingHook:
    """Shouts every echo argument on the way in and tags every result on the way out."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    async def __call__(
        self, method: str, params: dict[str, Any], ctx: RequestContext, call_next: CallNext
    ) -> dict[str, Any]:
        self.seen.append(method)
        if method == "prompts/get":
            raise InvalidParams("Refused by policy")
        if method == "tools/call" and "text" in params.get("arguments", {}):
            params = {**params, "arguments": {"text": params["arguments"]["text"].upper()}}
        result = await call_next(params)
        return {**result, "_meta": {"hooked": True}}


@pytest.fixture
def hook() -> RecordingHook:
    return RecordingHook()


@pytest.fixture
def hooked(hook: RecordingHook) -> MessageHandler:
    return MessageHandler(EchoBackend(), server_info=SERVER_INFO, hooks=[hook])


async def test_the_hook_can_rewrite_params_and_results(hooked: MessageHandler) -> None:
    message = request("tools/call", {"name": "echo", "arguments": {"text": "quiet"}})
    reply: Any = await hooked.handle(message, Connection(sessions=False))
    assert reply["result"]["content"] == [{"type": "text", "text": "QUIET"}]
    assert reply["result"]["_meta"] == {"hooked": True}


async def test_a_refusal_is_the_json_rpc_error_the_hook_raised(hooked: MessageHandler) -> None:
    reply: Any = await hooked.handle(request("prompts/get", {"name": "greet"}), Connection(sessions=False))
    assert reply["error"] == {"code": -32602, "message": "Refused by policy"}


@pytest.mark.parametrize(
    "method", ["tools/list", "resources/list", "resources/templates/list", "prompts/list", "resources/read"]
)
async def test_every_list_and_read_goes_through_the_hook(
    hooked: MessageHandler, hook: RecordingHook, method: str
) -> None:
    await hooked.handle(stateless(method, {"uri": "test://a"}), Connection())
    assert hook.seen == [method]


async def test_lifecycle_methods_bypass_the_hook(hooked: MessageHandler, hook: RecordingHook) -> None:
    connection = Connection()
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}
    await hooked.handle(request("initialize", init), connection)
    await hooked.handle(request("ping"), connection)
    await hooked.handle(request("logging/setLevel", {"level": "info"}), connection)
    await hooked.handle(request("resources/subscribe", {"uri": "test://a"}), connection)
    await hooked.handle(stateless("server/discover"), Connection())
    assert hook.seen == []
