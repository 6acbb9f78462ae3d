"""The SEP-2624 wire protocol an endpoint serves when it offers `InterceptorsExtension` (checklist A)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.auth.models import User
from django.test import override_settings

from mcp_django.endpoints import Endpoint
from mcp_django.interceptors.protocol import EXTENSION, InterceptorsExtension
from mcp_django.models import ToolCallRecord
from mcp_django.testing import MCPCallError, MCPTestClient
from tests.interceptors import support
from tests.interceptors.support import LOG
from tests.interceptors.tools import registry

ENTRIES: list[Any] = [
    {"CLASS": support.Step, "NAME": "pii", "EVENTS": ["tools/call"], "PRIORITY": {"response": 1000}},
    {"CLASS": support.Verdict, "NAME": "strict", "EVENTS": ["prompts/get"], "PHASES": ["request"], "MODE": "audit"},
    {"CLASS": support.WireSink, "NAME": "everything", "FAIL_OPEN": True, "PRIORITY": -5},
    {"CLASS": support.Hang, "NAME": "slow", "EVENTS": ["tools/list"], "TIMEOUT": 0.02},
    {"CLASS": support.Crash, "NAME": "crash", "EVENTS": ["tools/call"]},
]


@pytest.fixture(autouse=True)
def clear() -> Iterator[None]:
    LOG.clear()
    yield
    LOG.clear()


def client(
    entries: list[Any] = ENTRIES, *, era: str = "handshake", protocol: bool = True, user: Any = None
) -> MCPTestClient:
    endpoint = Endpoint(
        "wire",
        registry=registry,
        name="wire",
        allow_anonymous=True,
        interceptors=entries,
        extensions=[InterceptorsExtension] if protocol else None,
    )
    return MCPTestClient(endpoint, era=era, user=user)  # type: ignore[arg-type]


def invoke(**params: Any) -> dict[str, Any]:
    return {"name": "pii", "event": "tools/call", "phase": "request", "payload": {"name": "echo"}, **params}


async def test_the_capability_lists_the_union_of_hooked_events_in_the_handshake_era() -> None:
    result = await client().initialize()
    assert result["capabilities"]["experimental"][EXTENSION] == {
        "supportedEvents": ["*", "prompts/get", "tools/call", "tools/list"]
    }


async def test_the_capability_is_an_extension_in_the_stateless_era() -> None:
    result = await client(era="stateless").request("server/discover")
    assert result["capabilities"]["extensions"][EXTENSION]["supportedEvents"][0] == "*"


async def test_without_interceptors_the_capability_is_absent() -> None:
    result = await client([], era="stateless").request("server/discover")
    assert EXTENSION not in result["capabilities"].get("extensions", {})  # other extensions may be served


async def test_the_protocol_is_opt_in() -> None:
    with pytest.raises(MCPCallError) as raised:
        await client(protocol=False).request("interceptors/list")
    assert raised.value.code == -32601


async def test_installed_in_the_settings_the_extension_serves_every_endpoint_with_invocable_interceptors() -> None:
    with override_settings(MCP_DJANGO={**settings.MCP_DJANGO, "EXTENSIONS": [InterceptorsExtension]}):
        result = await client(protocol=False).request("interceptors/list")
    assert [descriptor["name"] for descriptor in result["interceptors"]][:2] == ["pii", "strict"]


async def test_an_endpoint_whose_interceptors_are_all_private_sinks_serves_no_capability_and_no_method() -> None:
    sinks_only = client([{"CLASS": support.Sink, "NAME": "everything"}], era="stateless")

    assert EXTENSION not in (await sinks_only.request("server/discover"))["capabilities"].get("extensions", {})
    with pytest.raises(MCPCallError) as raised:
        await sinks_only.request("interceptors/list")
    assert raised.value.code == -32601


@pytest.mark.parametrize("era", ["handshake", "stateless"])
async def test_the_list_returns_every_descriptor_in_settings_order_without_defaults(era: str) -> None:
    result = await client(era=era).request("interceptors/list")
    interceptors = result["interceptors"]
    assert [item["name"] for item in interceptors] == ["pii", "strict", "everything", "slow", "crash"]
    assert interceptors[0] == {
        "name": "pii",
        "description": 'Appends its tag to payload["steps"].',
        "type": "mutation",
        "hooks": [{"events": ["tools/call"], "phase": "request"}, {"events": ["tools/call"], "phase": "response"}],
        "priorityHint": {"response": 1000},
        "configSchema": interceptors[0]["configSchema"],
    }
    assert interceptors[1]["mode"] == "audit"
    assert interceptors[2]["failOpen"] is True
    assert interceptors[2]["priorityHint"] == -5
    assert "priorityHint" not in interceptors[3]


async def test_the_event_filter_keeps_interceptors_hooked_on_the_event_or_a_wildcard() -> None:
    result = await client().request("interceptors/list", {"event": "tools/call"})
    assert [item["name"] for item in result["interceptors"]] == ["pii", "everything", "crash"]


async def test_a_wildcard_event_filter_is_invalid_params() -> None:
    with pytest.raises(MCPCallError) as raised:
        await client().request("interceptors/list", {"event": "*"})
    assert raised.value.code == -32602


async def test_invoke_runs_one_interceptor_and_echoes_its_name_and_phase() -> None:
    result = await client().request("interceptor/invoke", invoke(config={"tag": "wire"}))
    assert result["type"] == "mutation"
    assert (result["interceptor"], result["phase"], result["modified"]) == ("pii", "request", True)
    assert result["payload"] == {"name": "echo", "steps": ["wire"]}
    assert result["durationMs"] >= 0


async def test_invoke_wraps_a_bool_verdict_as_a_validation_result() -> None:
    result = await client().request(
        "interceptor/invoke", invoke(name="strict", event="prompts/get", config={"valid": False})
    )
    assert (result["type"], result["valid"]) == ("validation", False)


async def test_invoke_of_an_unknown_name_is_invalid_params_with_the_name() -> None:
    with pytest.raises(MCPCallError) as raised:
        await client().request("interceptor/invoke", invoke(name="nobody"))
    assert (raised.value.code, raised.value.data) == (-32602, {"name": "nobody"})


async def test_invoke_of_an_unadvertised_hook_is_invalid_params_with_the_hooks() -> None:
    with pytest.raises(MCPCallError) as raised:
        await client().request("interceptor/invoke", invoke(name="strict", event="prompts/get", phase="response"))
    assert raised.value.code == -32602
    assert raised.value.data == {
        "name": "strict",
        "event": "prompts/get",
        "phase": "response",
        "advertisedHooks": [{"events": ["prompts/get"], "phase": "request"}],
    }


@pytest.mark.parametrize("params", [{}, {"name": "pii"}, invoke(phase="both"), invoke(payload="x")])
async def test_invoke_with_missing_or_malformed_params_is_invalid_params(params: dict[str, Any]) -> None:
    with pytest.raises(MCPCallError) as raised:
        await client().request("interceptor/invoke", params)
    assert raised.value.code == -32602


async def test_a_config_that_violates_the_schema_is_invalid_params() -> None:
    with pytest.raises(MCPCallError) as raised:
        await client().request("interceptor/invoke", invoke(config={"tag": 3}))
    assert raised.value.code == -32602


async def test_a_handler_that_raises_is_an_internal_error_never_a_result() -> None:
    with pytest.raises(MCPCallError) as raised:
        await client().request("interceptor/invoke", invoke(name="crash"))
    assert raised.value.code == -32603
    assert raised.value.data == {"interceptor": "crash", "reason": "error"}  # the exception stays in the log
    assert "boom" not in repr(raised.value)


async def test_a_timeout_is_an_internal_error_with_reason_timeout() -> None:
    with pytest.raises(MCPCallError) as raised:
        await client().request("interceptor/invoke", invoke(name="slow", event="tools/list"))
    assert raised.value.code == -32603
    assert raised.value.data == {"interceptor": "slow", "reason": "timeout", "timeoutMs": 20, "phase": "request"}


async def test_the_invoker_timeout_overrides_the_configured_one() -> None:
    with pytest.raises(MCPCallError) as raised:
        await client().request("interceptor/invoke", invoke(name="slow", event="tools/list", timeoutMs=5))
    assert raised.value.data["timeoutMs"] == 5


FORGED_CONTEXT = {"traceId": "forged-trace", "timestamp": "2001-01-01T00:00:00+00:00", "principal": {"type": "user"}}


@pytest.mark.django_db(transaction=True)
async def test_a_caller_cannot_write_audit_rows_through_invoke() -> None:
    entries = [{"CLASS": "mcp_django.interceptors.audit.AuditSinkInterceptor"}, *ENTRIES]
    alice = await sync_to_async(User.objects.create_user)("alice")
    wire = client(entries, user=alice)
    forged = {
        "name": "audit",
        "event": "tools/call",
        "phase": "response",
        "payload": {"content": []},
        "config": {"origin": "admin"},
        "context": FORGED_CONTEXT,
    }

    listed = await wire.request("interceptors/list")
    with pytest.raises(MCPCallError) as raised:
        await wire.request("interceptor/invoke", forged)

    assert "audit" not in [item["name"] for item in listed["interceptors"]]
    assert (raised.value.code, raised.value.data) == (-32602, {"name": "audit"})  # as for an unknown name
    assert await ToolCallRecord.objects.acount() == 0


async def test_sinks_are_not_invocable_unless_their_author_says_so() -> None:
    entries = [{"CLASS": support.Sink, "NAME": "quiet"}, {"CLASS": support.WireSink, "NAME": "loud"}]

    listed = await client(entries).request("interceptors/list")
    with pytest.raises(MCPCallError) as raised:
        await client(entries).request("interceptor/invoke", invoke(name="quiet", phase="response"))

    assert [item["name"] for item in listed["interceptors"]] == ["loud"]
    assert raised.value.code == -32602


async def test_the_context_an_interceptor_sees_is_the_server_s_whatever_the_caller_sends() -> None:
    entries = [{"CLASS": support.Witness, "NAME": "witness"}]

    result = await client(entries).request("interceptor/invoke", invoke(name="witness", context=FORGED_CONTEXT))

    assert result["info"]["traceId"] not in ("", "forged-trace")
    assert not result["info"]["timestamp"].startswith("2001")
    assert result["info"]["principal"] == {"type": "anonymous"}
