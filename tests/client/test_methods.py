"""`MCPClient`'s methods: the sync facade (`SyncMCPClient`, the test clients' `client.sync`) offers them as typed
sync methods (mypy and `inspect` see their parameters), and the connection each request takes comes from the
installed `CallerConnections` (the gateway app's, which knows each user's own token)."""

from __future__ import annotations

import inspect

import pytest
from django.core.exceptions import ImproperlyConfigured

from mcp_django.client import MCPClient, SyncMCPClient
from mcp_django.client.connection import CallerConnections, installed_callers, pool
from mcp_django.client.servers import server_config
from mcp_django.gateway.upstream import UpstreamConnections
from mcp_django.testing import MCPTestClient
from tests.client.backends import InProcess
from tests.client.test_servers import IN_PROCESS


def coroutine_methods(cls: type) -> list[str]:
    """The public coroutine methods of `cls`'s instances (an alternative constructor, a classmethod, is none)."""
    return sorted(
        name
        for name, member in inspect.getmembers(cls, inspect.iscoroutinefunction)
        if name[0] != "_" and not isinstance(inspect.getattr_static(cls, name), classmethod)
    )


def test_sync_mcpclient_offers_every_coroutine_method_of_mcpclient_with_its_signature() -> None:
    sync = SyncMCPClient(IN_PROCESS, interceptors=[])
    client = sync.client

    assert "list_interceptors" in coroutine_methods(MCPClient)
    for name in coroutine_methods(MCPClient):
        assert inspect.signature(getattr(sync, name)) == inspect.signature(getattr(client, name)), name
        assert not inspect.iscoroutinefunction(getattr(sync, name)), name


def test_a_test_client_s_sync_methods_run_the_same_requests() -> None:
    client = MCPTestClient("server", scope="SYSTEM", era="stateless")

    assert client.sync.read_resource.__doc__ == MCPClient.read_resource.__doc__
    assert client.sync.list_tools() == client.sync.request("tools/list")["tools"]


def test_sync_mcpclient_sends_any_request_through_the_facade() -> None:
    with SyncMCPClient(IN_PROCESS, interceptors=[]) as client:
        tools = client.list_tools()
        result = client.request("tools/call", {"name": "add", "arguments": {"a": 2, "b": 2}})

    assert [tool["name"] for tool in tools] == ["add"]
    assert result["structuredContent"] == {"result": 4}


async def test_without_the_gateway_app_a_server_taking_each_user_s_own_token_is_a_configuration_error() -> None:
    server = server_config({**IN_PROCESS, "AUTH": "oauth"})

    with pytest.raises(ImproperlyConfigured, match=r"add 'mcp_django\.gateway' to INSTALLED_APPS"):
        await CallerConnections().connection(server, object())
    try:
        assert isinstance(await CallerConnections().connection(server_config(IN_PROCESS), None), InProcess)
    finally:
        await pool.aclose()


def test_the_gateway_app_gives_mcpclient_each_user_s_own_connection() -> None:
    assert isinstance(installed_callers(), UpstreamConnections)


def test_mcpclient_and_sync_mcpclient_refuse_an_option_they_do_not_have() -> None:
    for client in (MCPClient, SyncMCPClient):
        with pytest.raises(TypeError, match="unknown option 'interceptor'"):
            client(IN_PROCESS, interceptor=[])  # type: ignore[call-arg]  # the misspelling under test
