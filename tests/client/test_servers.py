"""`MCP_DJANGO["SERVERS"]`: each entry's `BACKEND` (named, or inferred from `URL` / `COMMAND`) reads and checks
its own keys, so a kind of remote written outside the package (`tests.client.backends.InProcess`) is one module."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.checks import Error
from django.test import override_settings

from mcp_django.client import MCPClient, SyncMCPClient
from mcp_django.client.config import HTTP_BACKEND, STDIO_BACKEND, ServerConfig
from mcp_django.client.connection import connect, pool
from mcp_django.client.http import HTTPConnection
from mcp_django.client.servers import config_problems, location, server_config, servers
from mcp_django.client.stdio import StdioConnection
from mcp_django.gateway.interceptor_checks import check_interceptor_servers
from mcp_django.gateway.upstream_checks import check_upstream_oauth
from tests.client.backends import InProcess

IN_PROCESS = {"BACKEND": "tests.client.backends.InProcess", "REGISTRY": "tests.client.backends.registry"}


def test_a_named_backend_comes_from_settings_with_the_default_timeouts(settings: Any) -> None:
    settings.MCP_DJANGO = {
        **settings.MCP_DJANGO,
        "SERVERS": {"github": {"URL": "https://example.com/mcp", "TOKEN": "t"}},
        "REMOTE_READ_TIMEOUT": 7,
    }

    server = server_config("github")

    assert server == ServerConfig(
        name="github", url="https://example.com/mcp", token="t", connect_timeout=10.0, read_timeout=7.0
    )
    assert servers["github"] == server
    assert "github" in servers
    assert list(servers) == ["github"]
    with pytest.raises(LookupError, match="No server named 'gitlab'"):
        server_config("gitlab")


def test_an_entry_without_a_backend_is_http_with_a_url_and_stdio_with_a_command(settings: Any) -> None:
    settings.MCP_DJANGO = {
        **settings.MCP_DJANGO,
        "SERVERS": {"web": {"URL": "https://example.com/mcp"}, "local": {"COMMAND": ["python", "server.py"]}},
    }

    assert (servers["web"].backend, servers.backend("web")) == (HTTP_BACKEND, HTTPConnection)
    assert (servers["local"].backend, servers.backend("local")) == (STDIO_BACKEND, StdioConnection)
    assert servers["local"].command == ("python", "server.py")


def test_a_backend_configuration_with_mistakes_names_each_one() -> None:
    assert config_problems({"URL": "ftp://x", "COMMAND": ["a"], "HEADERS": {"a": 1}, "READ_TIMEOUT": 0, "X": 1}) == [
        "unknown key 'X'",
        "needs exactly one of URL and COMMAND",
        "HEADERS must be a dict of strings",
        "READ_TIMEOUT must be a positive number of seconds",
    ]
    assert config_problems({"URL": "ftp://x"}) == ["URL must be an http:// or https:// URL"]
    assert config_problems({"COMMAND": ["python", "server.py"]}) == []
    assert config_problems("http://x") == ["must be a dict with URL or COMMAND"]
    with pytest.raises(ValueError, match=r"Remote server \(unnamed\): needs exactly one of URL and COMMAND"):
        server_config({})


def test_each_backend_knows_only_its_own_keys() -> None:
    assert config_problems({"BACKEND": HTTP_BACKEND, "URL": "https://x/mcp", "ENV": {}}) == ["unknown key 'ENV'"]
    assert config_problems({"BACKEND": STDIO_BACKEND, "COMMAND": ["s"], "URL": "https://x/mcp"}) == [
        "unknown key 'URL'"
    ]
    assert config_problems({**IN_PROCESS, "REGISTRY": 3, "URL": "https://x/mcp"}) == [
        "unknown key 'URL'",
        "REGISTRY must be the dotted path to a Registry",
    ]


def test_a_backend_that_cannot_be_imported_or_is_no_connection_is_named() -> None:
    assert config_problems({"BACKEND": "tests.client.backends.Missing"}) == [
        "BACKEND 'tests.client.backends.Missing' cannot be imported"
    ]
    assert config_problems({"BACKEND": "tests.client.backends.registry"}) == [
        "BACKEND 'tests.client.backends.registry' is not a RemoteConnection class"
    ]


@pytest.mark.urls("tests.admin_urls")  # an endpoint without an interceptor list of its own
def test_a_bad_backend_is_e041() -> None:
    with override_settings(MCP_DJANGO={"SERVERS": {"odd": {"BACKEND": "myapp.Missing"}}}):
        assert check_interceptor_servers() == [
            Error(
                "MCP_DJANGO['SERVERS']['odd'] BACKEND 'myapp.Missing' cannot be imported.",
                hint="Give URL or COMMAND, and optional HEADERS, TOKEN, FAIL_OPEN, TIMEOUT (docs/gateway.md).",
                id="mcp_django_gateway.E041",
            )
        ]


def test_oauth_on_a_backend_that_cannot_sign_in_is_e166() -> None:
    with override_settings(MCP_DJANGO={"SERVERS": {"gh": {**IN_PROCESS, "AUTH": "oauth"}}}):
        assert check_upstream_oauth() == [
            Error(
                "MCP_DJANGO['SERVERS']['gh'] AUTH 'oauth' is for HTTP servers only.",
                hint="Per-user OAuth needs a URL: a stdio server has no authorization server.",
                id="mcp_django_gateway.E166",
            )
        ]


def test_a_backend_of_its_own_reads_its_keys_and_names_the_server() -> None:
    server = server_config(IN_PROCESS)

    assert server.backend == "tests.client.backends.InProcess"
    assert server.options == (("REGISTRY", "tests.client.backends.registry"),)
    assert server.name == location(IN_PROCESS) == "registry tests.client.backends.registry"


async def test_a_backend_of_its_own_is_what_the_pool_connects_with() -> None:
    try:
        connection = connect(IN_PROCESS)
        result = await connection.request("tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}})
    finally:
        await pool.aclose()

    assert isinstance(connection, InProcess)
    assert result["structuredContent"] == {"result": 5}


def test_mcpclient_calls_a_server_of_a_backend_of_its_own() -> None:
    with SyncMCPClient(IN_PROCESS, interceptors=[]) as client:
        result = client.call_tool("add", {"a": 1, "b": 2})
        tools = client.list_tools()

    assert result["structuredContent"] == {"result": 3}
    assert [tool["name"] for tool in tools] == ["add"]
    assert MCPClient(IN_PROCESS).server.backend == "tests.client.backends.InProcess"


def test_a_server_config_made_by_hand_is_of_the_kind_its_url_or_command_says() -> None:
    assert ServerConfig(name="web", url="https://example.com/mcp").backend == HTTP_BACKEND
    assert ServerConfig(name="local", command=("python", "server.py")).backend == STDIO_BACKEND
    assert ServerConfig(name="mine", backend="tests.client.backends.InProcess").backend.endswith("InProcess")
