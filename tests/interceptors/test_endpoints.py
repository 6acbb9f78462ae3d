"""The chain around real operations: through MCPTestClient and through the HTTP view (checklist B 41-45)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client, override_settings

from mcp_django.control.overlay import ToolSwitchHook
from mcp_django.endpoints import ChainHook, Endpoint
from mcp_django.interceptors.audit import flush_audit_log
from mcp_django.interceptors.hook import REFUSED_TOOL_CALL
from mcp_django.models import ToolCallRecord
from mcp_django.safety.idempotency import IdempotencyHook
from mcp_django.testing import MCPCallError, MCPTestClient
from tests.http_support import initialize, post
from tests.interceptors import support
from tests.interceptors.support import LOG
from tests.interceptors.tools import RECEIVED, registry

REDACT = "mcp_django.interceptors.redaction.RedactionInterceptor"
AUDIT = "mcp_django.interceptors.audit.AuditSinkInterceptor"
REFUSE = {"CLASS": support.Verdict, "NAME": "refuse", "EVENTS": ["tools/call"], "OPTIONS": {"valid": False}}


@pytest.fixture(autouse=True)
def clear() -> Iterator[None]:
    RECEIVED.clear()
    LOG.clear()
    yield
    LOG.clear()


def client(interceptors: list[Any], *, era: str = "handshake", user: Any = None, **options: Any) -> MCPTestClient:
    endpoint = Endpoint(
        "intercepted", registry=registry, name="intercepted", allow_anonymous=True, interceptors=interceptors, **options
    )
    return MCPTestClient(endpoint, user=user, era=era)  # type: ignore[arg-type]


def text_of(result: dict[str, Any]) -> str:
    return str(result["content"][0]["text"])


@pytest.mark.parametrize("era", ["handshake", "stateless"])
async def test_a_request_redaction_reaches_the_tool(era: str) -> None:
    result = await client([REDACT], era=era).call_tool("echo", {"text": "Contact user@example.com"})
    assert RECEIVED == ["Contact [REDACTED]"]
    assert text_of(result) == "Contact [REDACTED]"


async def test_a_response_redaction_rewrites_a_resource_read() -> None:
    result = await client([REDACT]).read_resource("memo://today")
    assert result["contents"][0]["text"] == "Call [REDACTED] or mail [REDACTED]"
    assert result["contents"][0]["uri"] == "memo://today"


@pytest.mark.parametrize("era", ["handshake", "stateless"])
async def test_a_blocked_call_never_reaches_the_tool_and_gets_a_generic_error(era: str) -> None:
    refuse = {**REFUSE, "OPTIONS": {"valid": False, "messages": [("secret policy detail", "error")]}}
    result = await client([refuse], era=era).call_tool("echo", {"text": "hi"})
    assert RECEIVED == []
    assert result["isError"] is True
    assert text_of(result) == REFUSED_TOOL_CALL
    assert "secret policy detail" not in json.dumps(result)


async def test_interceptor_messages_are_logged(caplog: pytest.LogCaptureFixture) -> None:
    refuse = {**REFUSE, "OPTIONS": {"valid": False, "messages": [("secret policy detail", "error")]}}
    await client([refuse]).call_tool("echo", {"text": "hi"})
    assert "refuse: [error] secret policy detail" in caplog.text


async def test_a_blocked_request_of_another_method_is_invalid_params() -> None:
    refuse = {"CLASS": support.Verdict, "NAME": "refuse", "EVENTS": ["prompts/get"], "OPTIONS": {"valid": False}}
    with pytest.raises(MCPCallError) as raised:
        await client([refuse]).get_prompt("greet", {"name": "Ada"})
    assert (raised.value.code, raised.value.message) == (-32602, "Invalid params: refused by the server's policy")


async def test_a_blocked_response_of_another_method_is_an_internal_error() -> None:
    refuse = {"CLASS": support.Verdict, "NAME": "refuse", "PHASES": ["response"], "OPTIONS": {"valid": False}}
    with pytest.raises(MCPCallError) as raised:
        await client([refuse]).list_prompts()
    assert (raised.value.code, raised.value.message) == (-32603, "Internal error")


async def test_a_response_mutation_that_breaks_input_schemas_is_repaired() -> None:
    tools = await client([{"CLASS": support.StripSchemas}]).list_tools()
    assert [tool["inputSchema"] for tool in tools] == [{"type": "object"}]


async def test_every_operation_goes_through_the_chain() -> None:
    mcp = client([{"CLASS": support.Sink, "NAME": "all", "OPTIONS": {"tag": "all"}, "PHASES": ["request"]}])
    await mcp.list_tools()
    await mcp.call_tool("echo", {"text": "x"})
    await mcp.list_resources()
    await mcp.list_resource_templates()
    await mcp.read_resource("memo://today")
    await mcp.list_prompts()
    await mcp.get_prompt("greet", {"name": "Ada"})
    assert len(LOG) == 7


@pytest.mark.django_db(transaction=True)
async def test_the_context_names_the_principal_and_a_trace_id(django_user_model: type[User]) -> None:
    seen: list[Any] = []

    class Capture(support.Sink):
        async def record(self, invocation: Any) -> None:
            seen.append(invocation.context)

    user = await django_user_model.objects.acreate(username="ada")
    await client([{"CLASS": Capture, "EVENTS": ["tools/call"]}], user=user).call_tool("echo", {"text": "x"})
    request, response = seen
    assert request.principal == {"type": "user", "id": str(user.pk)}
    assert request.trace_id == response.trace_id != ""
    assert request.timestamp.endswith("+00:00")
    assert request.endpoint == "intercepted"
    assert (response.outcome, response.request["arguments"]) == ("ok", {"text": "x"})


async def test_an_anonymous_caller_is_an_anonymous_principal() -> None:
    seen: list[Any] = []

    class Capture(support.Sink):
        async def record(self, invocation: Any) -> None:
            seen.append(invocation.context.principal)

    await client([{"CLASS": Capture, "EVENTS": ["tools/call"], "PHASES": ["request"]}]).call_tool("echo", {"text": "x"})
    assert seen == [{"type": "anonymous"}]


async def test_sinks_observe_refused_calls_as_blocked() -> None:
    observer = {"CLASS": support.Sink, "NAME": "observer", "OPTIONS": {"tag": "o"}, "PHASES": ["response"]}
    await client([REFUSE, observer]).call_tool("echo", {"text": "hi"})
    assert LOG == [("validation", "", "request"), ("sink", "o", "response", "blocked")]


async def test_no_interceptors_means_no_chain_behind_the_tool_switch() -> None:
    endpoint = Endpoint("plain", registry=registry, name="plain", allow_anonymous=True, interceptors=[])
    # the tool switch keeps the admin's state current (docs/admin.md); the chain hook then finds no chain
    assert [type(hook) for hook in endpoint.handler.hooks] == [ToolSwitchHook, ChainHook, IdempotencyHook]
    assert endpoint.chain_options().get("hook") is None


# -- audit ----------------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
async def test_the_audit_trail_stores_redacted_arguments_with_origin_agent(django_user_model: type[User]) -> None:
    user = await django_user_model.objects.acreate(username="grace")
    mcp = client([REDACT, AUDIT, {**REFUSE, "EVENTS": ["tools/call"], "OPTIONS": {"valid": True}}], user=user)
    await mcp.call_tool("echo", {"text": "mail me at grace@example.com"})
    assert flush_audit_log(timeout=10)
    record = await ToolCallRecord.objects.aget()
    assert (record.user_id, record.endpoint, record.tool, record.origin) == (user.pk, "intercepted", "echo", "agent")
    assert record.arguments == {"text": "mail me at [REDACTED]"}
    assert record.outcome == "ok"
    assert record.duration_ms >= 0


@pytest.mark.django_db(transaction=True)
async def test_the_audit_trail_records_blocked_and_failed_calls() -> None:
    mcp = client([REFUSE, AUDIT])
    await mcp.call_tool("echo", {"text": "hi"})
    with pytest.raises(MCPCallError):
        await client([AUDIT]).call_tool("no_such_tool", {})
    assert flush_audit_log(timeout=10)
    outcomes = [(r.tool, r.outcome) async for r in ToolCallRecord.objects.order_by("created", "pk")]
    assert sorted(outcomes) == [("echo", "blocked"), ("no_such_tool", "error")]


# -- through the HTTP view ------------------------------------------------------------------------


@pytest.mark.urls("tests.http_urls")
@pytest.mark.django_db(transaction=True)
def test_redaction_and_audit_through_the_http_view(client: Client) -> None:
    with override_settings(MCP_DJANGO={"INTERCEPTORS": [REDACT, AUDIT], "SESSIONS": False}):
        post(client, initialize())
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call"}
        call["params"] = {"name": "echo", "arguments": {"text": "card 4111 1111 1111 1111"}}
        response = post(client, call, {"MCP-Protocol-Version": "2025-11-25"})
        assert response.status_code == 200, response.content
        assert response.json()["result"]["content"][0]["text"] == "card [REDACTED]"
        assert flush_audit_log(timeout=10)
    record = ToolCallRecord.objects.get()
    assert (record.tool, record.arguments, record.origin) == ("echo", {"text": "card [REDACTED]"}, "agent")
