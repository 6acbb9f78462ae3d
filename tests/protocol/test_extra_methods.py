"""Protocol extensions plug in from outside: extra methods and advertised extension capabilities."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from mcp_django.protocol import Connection, InvalidParams, MessageHandler, RequestContext
from mcp_django.protocol.features import MethodSpec, Server
from tests.protocol.backends import EchoBackend
from tests.protocol.conftest import SERVER_INFO, request, stateless

EXTENSION = "io.example/shout"


async def shout(server: Server, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]:
    if not isinstance(params.get("text"), str):
        raise InvalidParams("Invalid params: text must be a string")
    return {"text": params["text"].upper(), "era": ctx.era.value}


@pytest.fixture
def extended() -> MessageHandler:
    return MessageHandler(
        EchoBackend(),
        server_info=SERVER_INFO,
        extra_methods=[MethodSpec("example/shout", shout, operation=False)],
        extensions={EXTENSION: {"loud": True}},
    )


async def test_an_extra_method_is_served_in_the_handshake_era(extended: MessageHandler) -> None:
    reply: Any = await extended.handle(request("example/shout", {"text": "hi"}), Connection(sessions=False))
    assert reply["result"] == {"text": "HI", "era": "handshake"}


async def test_an_extra_method_is_served_in_the_stateless_era_with_the_stateless_decorations(
    extended: MessageHandler,
) -> None:
    reply: Any = await extended.handle(stateless("example/shout", {"text": "hi"}), Connection())
    assert reply["result"]["text"] == "HI"
    assert reply["result"]["resultType"] == "complete"
    assert reply["result"]["_meta"]["io.modelcontextprotocol/serverInfo"] == SERVER_INFO


async def test_an_extra_method_checks_its_own_params(extended: MessageHandler) -> None:
    reply: Any = await extended.handle(request("example/shout", {"text": 3}), Connection(sessions=False))
    assert reply["error"] == {"code": -32602, "message": "Invalid params: text must be a string"}


async def test_extensions_are_advertised_under_extensions_and_experimental_in_the_handshake_era(
    extended: MessageHandler,
) -> None:
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}
    reply: Any = await extended.handle(request("initialize", init), Connection(sessions=False))
    assert reply["result"]["capabilities"]["extensions"] == {EXTENSION: {"loud": True}}  # SEP-2133 clients
    assert reply["result"]["capabilities"]["experimental"] == {EXTENSION: {"loud": True}}  # the 2025 schema's


async def test_an_extension_of_the_stateless_era_only_is_advertised_by_discover_and_not_by_initialize() -> None:
    handler = MessageHandler(
        EchoBackend(),
        server_info=SERVER_INFO,
        extensions={EXTENSION: {"loud": True}, "io.example/later": {}},
        stateless_extensions=["io.example/later"],
    )
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}

    initialized: Any = await handler.handle(request("initialize", init), Connection(sessions=False))
    discovered: Any = await handler.handle(stateless("server/discover"), Connection())

    assert initialized["result"]["capabilities"]["extensions"] == {EXTENSION: {"loud": True}}
    assert initialized["result"]["capabilities"]["experimental"] == {EXTENSION: {"loud": True}}
    assert discovered["result"]["capabilities"]["extensions"] == {EXTENSION: {"loud": True}, "io.example/later": {}}


async def test_extensions_are_advertised_under_extensions_in_the_stateless_era(extended: MessageHandler) -> None:
    reply: Any = await extended.handle(stateless("server/discover"), Connection())
    assert reply["result"]["capabilities"]["extensions"] == {EXTENSION: {"loud": True}}


async def test_without_extensions_nothing_extra_is_advertised() -> None:
    reply: Any = await MessageHandler(EchoBackend(), server_info=SERVER_INFO).handle(
        stateless("server/discover"), Connection()
    )
    assert "extensions" not in reply["result"]["capabilities"]


async def test_an_unserved_extra_method_is_still_method_not_found() -> None:
    handler = MessageHandler(EchoBackend(), server_info=SERVER_INFO)
    reply: Any = await handler.handle(request("example/shout", {"text": "hi"}), Connection(sessions=False))
    assert reply["error"]["code"] == -32601


def test_an_extra_method_may_not_replace_a_core_method() -> None:
    with pytest.raises(ValueError, match=r"may not replace core methods: ping, tools/call"):
        MessageHandler(
            EchoBackend(),
            server_info=SERVER_INFO,
            extra_methods=[MethodSpec("tools/call", shout), MethodSpec("ping", shout)],
        )
