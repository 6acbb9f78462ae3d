"""The `requestState` of 2026 `input_required` results, as an endpoint mints it from Django's secrets."""

from __future__ import annotations

import base64
from typing import Any

from django.test import override_settings

from mcp_django import Context, Registry
from mcp_django.endpoints import Endpoint

registry = Registry("request-state-tests")
NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
}
OLD_SECRET, NEW_SECRET = "old-secret-" + "o" * 50, "new-secret-" + "n" * 50


@registry.tool
async def enrol(ctx: Context) -> str:
    """Ask for a name, then a second name; keep a note in the state between rounds."""
    first = await ctx.elicit("Your name?", NAME_SCHEMA)
    ctx.state["note"] = "card 4111-1111"
    second = await ctx.elicit("Your partner's name?", NAME_SCHEMA)
    return f"{first['content']['name']} and {second['content']['name']}"


def call(answers: dict[str, Any] | None = None, state: str | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "enrol", "arguments": {}, "_meta": META}
    if answers is not None:
        params |= {"inputResponses": answers, "requestState": state}
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}


async def ask(endpoint: Endpoint, message: dict[str, Any]) -> Any:
    connection = endpoint.connection(None, transport="memory", version_header="2026-07-28")
    return await endpoint.handler.handle(message, connection)


def answer(name: str) -> dict[str, Any]:
    return {"action": "accept", "content": {"name": name}}


async def second_round(endpoint: Endpoint) -> tuple[str, dict[str, Any]]:
    """The state after the first answer (it carries 'Ada' and the note), and the answers of the next round."""
    first = await ask(endpoint, call())
    (key,) = first["result"]["inputRequests"]
    second = await ask(endpoint, call({key: answer("Ada")}, first["result"]["requestState"]))
    (next_key,) = second["result"]["inputRequests"]
    return second["result"]["requestState"], {next_key: answer("Bob")}


async def test_the_state_a_client_holds_shows_neither_answers_nor_ctx_state() -> None:
    endpoint = Endpoint("state/mcp", registry=registry, name="state", allow_anonymous=True)
    state, _ = await second_round(endpoint)

    decoded = b"".join(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)) for part in state.split("."))

    assert b"Ada" not in decoded
    assert b"4111" not in decoded


async def test_a_state_minted_before_secret_key_rotation_opens_with_secret_key_fallbacks() -> None:
    endpoint = Endpoint("state/mcp", registry=registry, name="state", allow_anonymous=True)
    with override_settings(SECRET_KEY=OLD_SECRET):
        state, answers = await second_round(endpoint)

    with override_settings(SECRET_KEY=NEW_SECRET, SECRET_KEY_FALLBACKS=[OLD_SECRET]):
        rotated = await ask(endpoint, call(answers, state))
    with override_settings(SECRET_KEY=NEW_SECRET, SECRET_KEY_FALLBACKS=[]):
        forgotten = await ask(endpoint, call(answers, state))

    assert rotated["result"]["content"] == [{"type": "text", "text": "Ada and Bob"}]
    assert forgotten["error"] == {"code": -32602, "message": "Invalid requestState"}
