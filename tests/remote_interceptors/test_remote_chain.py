"""Remote interceptor servers in the chain, against a real interceptor server (daphne): the guard refuses,
the rewrite rewrites, merged by priority with local interceptors; discovery fails closed unless the
server is fail-open; timeouts; sinks never hold up the call; settings and the admin name the servers."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.conf import settings
from django.test import override_settings

from mcp_django.control.state import control_state
from mcp_django.endpoints import Endpoint
from mcp_django.gateway.models import RemoteServer
from mcp_django.gateway.remote_chain import RemoteChainHook
from mcp_django.interceptors import base
from mcp_django.interceptors.hook import REFUSED_TOOL_CALL, caller_context
from mcp_django.testing import MCPCallError, MCPTestClient
from tests.conftest import LiveServer
from tests.interceptors.support import SyncStep
from tests.interceptors.tools import RECEIVED, registry

pytestmark = pytest.mark.live


@pytest.fixture(autouse=True)
def clear() -> Iterator[None]:
    RECEIVED.clear()
    yield
    RECEIVED.clear()


def host(server: LiveServer, **policy: Any) -> dict[str, Any]:
    """An inline `{"SERVER": ...}` entry for the guard-and-rewrite host."""
    return {"SERVER": {"URL": server.url("/host/mcp"), **policy}}


def shout(priority: int) -> dict[str, Any]:
    """A local mutation uppercasing arguments.text."""
    return {"CLASS": SyncStep, "NAME": "shout", "EVENTS": ["tools/call"], "PHASES": ["request"], "PRIORITY": priority}


def client(interceptors: list[Any] | None) -> MCPTestClient:
    endpoint = Endpoint("remote", registry=registry, name="remote", allow_anonymous=True, interceptors=interceptors)
    return MCPTestClient(endpoint)


def text_of(result: dict[str, Any]) -> str:
    return str(result["content"][0]["text"])


async def test_a_remote_validation_refuses_a_call_and_a_remote_mutation_rewrites_its_arguments(
    interceptor_host: LiveServer,
) -> None:
    mcp = client([host(interceptor_host)])
    refused = await mcp.call_tool("echo", {"text": "a forbidden word"})
    assert refused["isError"] is True
    assert text_of(refused) == REFUSED_TOOL_CALL
    assert RECEIVED == []
    result = await mcp.call_tool("echo", {"text": "a secret"})
    assert RECEIVED == ["a [hidden]"]
    assert text_of(result) == "a [hidden]"


@pytest.mark.parametrize(
    ("priority", "order", "received"),
    [(5, ["shout", "rewrite", "guard"], "A SECRET"), (20, ["rewrite", "shout", "guard"], "A [HIDDEN]")],
)
async def test_remote_and_local_interceptors_run_as_one_chain_ordered_by_priority(
    interceptor_host: LiveServer, priority: int, order: list[str], received: str
) -> None:
    chain = [shout(priority), host(interceptor_host)]
    hook = Endpoint("remote", registry=registry, name="remote", interceptors=chain).chain_options()["hook"]
    assert isinstance(hook, RemoteChainHook)
    plan = await hook.plan()
    ran = await plan.run(
        "tools/call", "request", {"name": "echo", "arguments": {"text": "a secret"}}, caller_context(None)
    )
    assert [record.interceptor for record in ran.results] == order  # mutations by priority, then validations
    await client(chain).call_tool("echo", {"text": "a secret"})
    assert [received] == RECEIVED


async def test_a_server_that_cannot_be_listed_refuses_every_operation(closed_url: str) -> None:
    mcp = client([shout(0), {"SERVER": {"URL": closed_url}}])
    for call in (mcp.call_tool("echo", {"text": "hi"}), mcp.list_tools()):
        with pytest.raises(MCPCallError) as refused:
            await call
        assert refused.value.code == -32603
        assert refused.value.message.startswith(f"Interceptor server {closed_url!r} could not be listed")
        assert refused.value.data["server"] == closed_url
    assert RECEIVED == []


async def test_a_fail_open_server_that_cannot_be_listed_is_skipped(closed_url: str) -> None:
    result = await client([shout(0), {"SERVER": {"URL": closed_url, "FAIL_OPEN": True}}]).call_tool(
        "echo", {"text": "hi"}
    )
    assert text_of(result) == "HI"


async def test_a_server_that_does_not_answer_the_listing_in_time_refuses_with_a_timeout() -> None:
    with socket.socket() as silent:  # accepts connections (the backlog) and never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/mcp"
        with pytest.raises(MCPCallError) as refused:
            await client([{"SERVER": {"URL": url, "TIMEOUT": 0.3}}]).call_tool("echo", {"text": "hi"})
    assert refused.value.data == {"server": url, "reason": "timeout"}
    assert RECEIVED == []


async def test_a_remote_interceptor_that_takes_too_long_fails_closed_or_open(interceptor_host: LiveServer) -> None:
    slow = {"URL": interceptor_host.url("/slow/mcp"), "TIMEOUT": 0.3}
    refused = await client([{"SERVER": slow}]).call_tool("echo", {"text": "hi"})
    assert refused["isError"] is True
    assert RECEIVED == []
    allowed = await client([{"SERVER": {**slow, "FAIL_OPEN": True}}]).call_tool("echo", {"text": "hi"})
    assert text_of(allowed) == "hi"


async def test_a_remote_sink_never_holds_up_the_call(interceptor_host: LiveServer) -> None:
    sink = {"URL": interceptor_host.url("/sink/mcp"), "TIMEOUT": 60}
    result = await client([{"SERVER": sink}]).call_tool("echo", {"text": "hi"})
    assert text_of(result) == "hi"
    in_flight = [task for task in base._in_background if not task.done()]
    assert in_flight  # answered while the sink (a minute long) is still being recorded
    for task in in_flight:
        task.cancel()
    await asyncio.gather(*in_flight, return_exceptions=True)


def servers(chain: list[Any], **named: Any) -> Any:
    return override_settings(MCP_DJANGO={**settings.MCP_DJANGO, "INTERCEPTORS": chain, "SERVERS": named})


async def test_a_server_named_in_settings_runs_in_the_chains_that_name_it(interceptor_host: LiveServer) -> None:
    with servers([{"SERVER": "guard"}], guard={"URL": interceptor_host.url("/host/mcp")}):
        refused = await client(None).call_tool("echo", {"text": "forbidden"})
        own_list = await client([]).call_tool("echo", {"text": "forbidden"})
    assert refused["isError"] is True
    assert text_of(own_list) == "forbidden"
    assert RECEIVED == ["forbidden"]


@pytest.fixture
def fresh_state() -> Iterator[None]:
    control_state.invalidate()
    yield
    control_state.invalidate()


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("fresh_state")
async def test_the_admin_switches_a_server_off_and_adds_one(interceptor_host: LiveServer) -> None:
    with servers([{"SERVER": "*"}], guard={"URL": interceptor_host.url("/host/mcp")}):
        mcp = client(None)
        assert text_of(await mcp.call_tool("echo", {"text": "forbidden"})) == "forbidden"  # * : the admin's rows
        row = await sync_to_async(RemoteServer.objects.create)(name="guard", timeout=3)
        assert (await mcp.call_tool("echo", {"text": "forbidden"}))["isError"] is True
        row.interceptors_enabled = False
        await sync_to_async(row.save)()
        assert text_of(await mcp.call_tool("echo", {"text": "forbidden"})) == "forbidden"
        await sync_to_async(RemoteServer.objects.create)(name="added", url=interceptor_host.url("/host/mcp"))
        assert (await mcp.call_tool("echo", {"text": "forbidden"}))["isError"] is True
    await sync_to_async(RemoteServer.objects.all().delete)()
