"""The pytest plugin's fixtures and the assertion helpers, on the example project's endpoints."""

from __future__ import annotations

import importlib
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mcp_types.jsonrpc import INVALID_PARAMS

from mcp_django.exceptions import BackendUnavailable
from mcp_django.testing import MCPHTTPTestClient, MCPTestClient, assert_mcp_error, assert_tool_error, assert_tool_result

pytestmark = pytest.mark.django_db(transaction=True)  # users made in async tests are seen by every thread

MakeClient = Callable[..., MCPTestClient]
EMPTY_STATS = {"books": 0, "authors": 0, "oldest": None, "newest": None}


async def test_a_client_bound_to_a_scope_sees_what_that_scope_reaches(mcp_client: MakeClient, mcp_era: Any) -> None:
    team = {tool["name"] for tool in await mcp_client("/mcp", scope="TEAM", era=mcp_era).list_tools()}
    user = {tool["name"] for tool in await mcp_client("server", scope="USER", era=mcp_era).list_tools()}

    assert "reindex_catalogue" in team
    assert "reindex_catalogue" not in user
    assert "search_books" in user


async def test_a_client_bound_to_a_user_calls_as_that_user(mcp_client: MakeClient, django_user_model: Any) -> None:
    ada = await django_user_model.objects.acreate(username="ada")
    client = mcp_client("/mcp", user=ada)

    assert_tool_result(await client.call_tool("catalogue_stats"), structured=EMPTY_STATS)
    assert "reindex_catalogue" not in {tool["name"] for tool in await client.list_tools()}


async def test_assert_tool_error_passes_an_error_result_and_returns_its_text(mcp_client: MakeClient) -> None:
    client = mcp_client("/mcp", scope="USER")

    message = assert_tool_error(await client.call_tool("search_books", {"query": 12}), match="query")

    assert message


async def test_assert_tool_result_and_assert_tool_error_fail_on_the_other_outcome(mcp_client: MakeClient) -> None:
    client = mcp_client("/mcp", scope="USER")
    error = await client.call_tool("search_books", {"query": 12})
    success = await client.call_tool("catalogue_stats")

    with pytest.raises(AssertionError, match="the tool failed"):
        assert_tool_result(error)
    with pytest.raises(AssertionError, match="the tool did not fail"):
        assert_tool_error(success)
    with pytest.raises(AssertionError, match="structuredContent"):
        assert_tool_result(success, structured={})


async def test_assert_mcp_error_catches_a_protocol_error_with_its_code(mcp_client: MakeClient) -> None:
    client = mcp_client("/mcp", scope="USER")

    with assert_mcp_error(INVALID_PARAMS, match="nope") as raised:
        await client.call_tool("nope")

    assert raised.value.code == INVALID_PARAMS
    with pytest.raises(AssertionError, match="no MCPCallError was raised"), assert_mcp_error():
        await client.list_tools()


def test_a_scope_needs_an_endpoint() -> None:
    with pytest.raises(TypeError, match="only for an endpoint"):
        MCPTestClient("mcp_django.default_registry", scope="TEAM")


def test_an_unknown_target_is_named() -> None:
    with pytest.raises(LookupError, match="'nowhere/mcp' is neither"):
        MCPTestClient("nowhere/mcp")


async def test_the_http_client_calls_a_live_server_in_either_era(
    mcp_http_client: MakeHTTPClient, django_user_model: Any, mcp_era: Any
) -> None:
    ada = await django_user_model.objects.acreate(username="ada")

    async with mcp_http_client("/mcp", user=ada, era=mcp_era) as client:
        tools = {tool["name"] for tool in await client.list_tools()}
        result = await client.call_tool("catalogue_stats")
        with assert_mcp_error(INVALID_PARAMS):
            await client.call_tool("nope")

    assert "search_books" in tools
    assert_tool_result(result, structured=EMPTY_STATS)


MakeHTTPClient = Callable[..., MCPHTTPTestClient]


async def test_the_http_client_without_credentials_is_refused(mcp_http_client: MakeHTTPClient) -> None:
    async with mcp_http_client("/mcp") as client:
        with pytest.raises(BackendUnavailable, match="401") as raised:
            await client.list_tools()

    assert raised.value.reason == "refused"


def test_the_plugin_imports_no_django_until_a_fixture_is_used() -> None:
    # pytest loads it in every run of a project that installs mcp_django, Django configured or not
    code = "import sys, mcp_django.testing.pytest_plugin; assert 'django' not in sys.modules, 'django imported'"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).resolve().parent.parent)


def test_the_testing_package_gives_the_clients_and_the_old_paths_are_gone() -> None:
    import mcp_django.testing as testing
    from mcp_django.testing.http import MCPHTTPTestClient

    assert testing.MCPHTTPTestClient is MCPHTTPTestClient
    assert testing.MCPTestClient.__module__ == "mcp_django.testing.client"
    for old in ("mcp_django.pytest_plugin", "mcp_django.testing_http"):
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module(old)
    with pytest.raises(AttributeError, match="no attribute 'MCPTestClinet'"):
        testing.MCPTestClinet  # noqa: B018
