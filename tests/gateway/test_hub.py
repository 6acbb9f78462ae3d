"""A hub (federation): one endpoint composing a local registry with remote servers under namespaces, served
in process in front of the official SDK's server over HTTP and over stdio, and one remote that is down."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from django.core.checks import Error
from django.test import AsyncClient

from mcp_django import Registry
from mcp_django.client.connection import pool
from mcp_django.endpoints import Endpoint, endpoint_registry
from mcp_django.exceptions import MCPCallError
from mcp_django.gateway.checks import _hub_problems
from mcp_django.gateway.source import RemoteSource
from mcp_django.testing import MCPTestClient
from tests.conftest import ROOT
from tests.gateway.conftest import sdk_stdio_command
from tests.gateway.test_gateway import WAIT, _messages, send
from tests.http_support import ACCEPT, stateless, stateless_headers

pytestmark = [pytest.mark.live, pytest.mark.urls("tests.gateway.urls"), pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def _servers(settings: Any, sdk_backend_url: str) -> None:
    settings.MCP_DJANGO = {
        **settings.MCP_DJANGO,
        "SERVERS": {
            "sdk": {"URL": sdk_backend_url},
            "stdio": {"COMMAND": sdk_stdio_command(), "CWD": str(ROOT), "PROTOCOL_VERSION": "2025-06-18"},
        },
        # Patience for a stdio server starting on a loaded machine: these tests are about what a hub serves;
        # how long it waits is test_hub_faults.py's.
        "REMOTE_LIST_TIMEOUT": WAIT,
    }


@pytest.fixture(autouse=True)
async def _close_the_pool() -> AsyncIterator[None]:
    yield
    await pool.aclose()


def text_of(answer: dict[str, Any]) -> str:
    return str(answer["result"]["content"][0]["text"])


async def test_a_hub_lists_local_tools_and_each_remotes_under_its_namespace() -> None:
    answer = await asyncio.wait_for(send("/hub/mcp", "tools/list"), WAIT)

    names = [tool["name"] for tool in answer["result"]["tools"]]
    assert names[0] == "echo"  # the local registry comes first
    assert {"sdk_echo", "sdk_seen_headers", "sdk_announce", "io_echo", "io_announce"} <= set(names)
    assert "sdk_slow" not in names  # its TOOL_SCOPES ask for SYSTEM
    assert "io_slow" not in names  # not one of its TOOLS
    assert not [name for name in names if name.startswith("down_")]  # down: dropped out, the others answer


async def test_a_hub_calls_each_tool_where_it_lives() -> None:
    local = await send("/hub/mcp", "tools/call", {"name": "echo", "arguments": {"text": "here"}})
    over_http = await send("/hub/mcp", "tools/call", {"name": "sdk_echo", "arguments": {"text": "http"}})
    over_stdio = await send("/hub/mcp", "tools/call", {"name": "io_echo", "arguments": {"text": "stdio"}})

    assert [text_of(local), text_of(over_http), text_of(over_stdio)] == ["here", "http", "stdio"]


async def test_a_handshake_caller_answers_a_remotes_roots_question_asked_without_params() -> None:
    asked: list[tuple[str, dict[str, Any]]] = []

    def answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
        asked.append((method, params))
        return {"roots": [{"uri": "file:///work/", "name": "work"}]}

    client = MCPTestClient("gw-hub", era="handshake", on_input=answer)
    result = await asyncio.wait_for(client.call_tool("sdk_roots"), WAIT)

    assert asked == [("roots/list", {})]
    assert result["content"] == [{"type": "text", "text": "file:///work/"}]
    assert not result.get("isError")


def roots_answer(asked: list[str]) -> Any:
    def answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
        asked.append(method)
        return {"roots": [{"uri": "file:///work/", "name": "work"}]}

    return answer


@pytest.mark.parametrize("era", ["handshake", "stateless"])
async def test_a_handshake_era_remotes_own_request_is_answered_by_the_caller_of_the_call_in_either_era(
    era: Any,
) -> None:
    asked: list[str] = []  # the stdio remote speaks 2025-06-18: it sends roots/list on stdout, during the call
    client = MCPTestClient("gw-hub", era=era, on_input=roots_answer(asked))

    result = await asyncio.wait_for(client.call_tool("io_roots"), WAIT)

    assert asked == ["roots/list"]
    assert result["content"] == [{"type": "text", "text": "file:///work/"}]


@pytest.mark.parametrize("era", ["handshake", "stateless"])
async def test_a_handshake_era_remotes_request_to_a_caller_that_declared_no_roots_is_refused_not_hung(era: Any) -> None:
    asked: list[str] = []
    client = MCPTestClient("gw-hub", era=era, capabilities={"sampling": {}}, on_input=roots_answer(asked))

    try:
        result = await asyncio.wait_for(client.call_tool("io_roots"), WAIT)
    except MCPCallError as error:
        result = {"error": error.message}

    assert asked == []
    assert "did not declare the roots capability" in str(result)


async def test_a_2026_callers_answer_that_reaches_a_worker_where_the_remote_does_not_wait_is_refused() -> None:
    from mcp_django.gateway import questions

    def answer_elsewhere(method: str, params: dict[str, Any]) -> dict[str, Any]:
        questions._parked.clear()  # as if the retry reached another worker: the remote waits in this one
        return {"roots": []}

    client = MCPTestClient("gw-hub", era="stateless", on_input=answer_elsewhere)

    with pytest.raises(MCPCallError, match="question is no longer waiting"):
        await asyncio.wait_for(client.call_tool("io_roots"), WAIT)


@pytest.mark.parametrize("era", ["handshake", "stateless"])
@pytest.mark.parametrize("tool", ["io_log", "sdk_log"])
async def test_a_remotes_log_messages_reach_the_caller_of_the_call_they_are_about(era: Any, tool: str) -> None:
    client = MCPTestClient("gw-hub", era=era)
    meta = {"io.modelcontextprotocol/logLevel": "info"} if era == "stateless" else {}
    params = {"name": tool, "arguments": {"text": "about this call"}, "_meta": meta}

    result = await asyncio.wait_for(client.request("tools/call", params), WAIT)

    logged = [note["params"] for note in client.notifications if note["method"] == "notifications/message"]
    assert result["content"] == [{"type": "text", "text": "logged"}]
    assert [(entry["level"], entry["data"]) for entry in logged] == [("info", "about this call")]


@pytest.mark.parametrize(
    ("url", "capabilities", "sent"),
    [
        ("https://connect.example/login", {"elicitation": {"url": {}}}, True),
        ("javascript:alert(document.cookie)", {"elicitation": {"url": {}}}, False),  # not a web page
        ("https://connect.example/login", {"elicitation": {}}, False),  # a caller that cannot be sent to a URL
    ],
)
async def test_a_remotes_url_elicitation_reaches_only_a_caller_that_takes_urls_and_only_an_http_url(
    url: str, capabilities: dict[str, Any], sent: bool
) -> None:
    asked: list[dict[str, Any]] = []

    def answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params)
        return {"action": "accept"}

    client = MCPTestClient("gw-hub", era="stateless", capabilities=capabilities, on_input=answer)
    try:
        result = await asyncio.wait_for(client.call_tool("sdk_visit", {"url": url}), WAIT)
    except MCPCallError as error:
        result = {"error": error.message}

    if sent:
        assert [params["url"] for params in asked] == [url]
        assert result["content"] == [{"type": "text", "text": "the user chose accept"}]
    else:
        assert (asked, url in str(result)) == ([], False)


async def test_the_resources_a_remotes_tool_or_prompt_links_to_or_embeds_come_back_readable_through_the_hub() -> None:
    client = MCPTestClient("gw-hub", era="stateless")

    called = await asyncio.wait_for(client.call_tool("sdk_link"), WAIT)
    prompted = await asyncio.wait_for(client.get_prompt("sdk_with_note"), WAIT)
    read = await asyncio.wait_for(client.read_resource(called["content"][0]["uri"]), WAIT)

    link, embedded = called["content"]
    assert (link["uri"], embedded["resource"]["uri"]) == ("sdk+note://greeting", "sdk+note://greeting")
    assert [
        message["content"].get("uri") or message["content"]["resource"]["uri"] for message in prompted["messages"]
    ] == [
        "sdk+note://greeting",
        "sdk+note://greeting",
    ]
    assert read["contents"][0]["text"] == "hello from a note"


async def test_a_remotes_apps_cannot_point_at_the_sites_views_nor_widen_their_sandbox_through_a_hub() -> None:
    client = MCPTestClient("gw-hub", era="stateless")

    tools = {tool["name"]: tool for tool in await asyncio.wait_for(client.list_tools(), WAIT)}
    resources = {item["uri"]: item for item in await asyncio.wait_for(client.list_resources(), WAIT)}

    assert "ui" not in tools["sdk_card"].get("_meta", {})  # its view's URI could be one of the site's
    assert "sdk_app_only" not in tools  # for a view that is not passed on
    assert resources["sdk+ui://sdk/widget"]["_meta"]["ui"] == {"prefersBorder": True}


async def test_a_gateway_passes_a_remotes_views_on_in_their_default_sandbox() -> None:
    client = MCPTestClient("gw-stdio", era="stateless")

    tools = {tool["name"]: tool for tool in await asyncio.wait_for(client.list_tools(), WAIT)}
    resources = {item["uri"]: item for item in await asyncio.wait_for(client.list_resources(), WAIT)}

    assert tools["card"]["_meta"]["ui"] == {"resourceUri": "ui://demo/book_card.html"}  # a gateway has no views
    assert resources["ui://sdk/widget"]["_meta"]["ui"] == {"prefersBorder": True}


async def test_a_call_to_a_tool_of_a_remote_that_is_down_is_a_clear_error() -> None:
    answer = await asyncio.wait_for(send("/hub/mcp", "tools/call", {"name": "down_echo", "arguments": {}}), WAIT)

    assert answer["error"]["code"] == -32603
    assert answer["error"]["message"].startswith("Backend 'gateway gw-hub' unavailable: ")


@pytest.mark.parametrize(("path", "name"), [("/hub/mcp", "sdk_locate"), ("/stdio/mcp", "locate")])
async def test_a_remote_tools_param_header_that_differs_from_its_argument_is_refused(path: str, name: str) -> None:
    listed = await asyncio.wait_for(send(path, "tools/list"), WAIT)  # the front learns the remote's x-mcp-header
    assert name in [tool["name"] for tool in listed["result"]["tools"]]
    call = {"name": name, "arguments": {"region": "eu-west"}}

    refused = await send(path, "tools/call", call, headers={"Mcp-Param-Region": "us-east"})
    served = await send(path, "tools/call", call, headers={"Mcp-Param-Region": "eu-west"})

    assert refused["error"] == {
        "code": -32020,
        "message": "Header mismatch: Mcp-Param-Region does not match the argument 'region'",
    }
    assert text_of(served) == "ran in eu-west", served


async def test_a_hub_answers_a_name_outside_every_namespace_as_unknown() -> None:
    answer = await send("/hub/mcp", "tools/call", {"name": "io_slow", "arguments": {"seconds": 0}})

    assert answer["error"]["message"] == "Unknown tool: io_slow"


@pytest.mark.parametrize("tool", ["io_announce", "sdk_announce_here"])  # on the server's stream, on the call's
async def test_a_remotes_list_changed_reaches_the_hubs_listening_client_once(tool: str) -> None:
    body = stateless("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, id=7)
    response: Any = await AsyncClient().post(
        "/hub/mcp",
        data=json.dumps(body).encode(),
        content_type="application/json",
        headers={"Accept": ACCEPT, **stateless_headers("subscriptions/listen")},
    )
    stream = _messages(response)
    acknowledged = await asyncio.wait_for(anext(stream), WAIT)
    assert acknowledged["method"] == "notifications/subscriptions/acknowledged"

    waiting = asyncio.ensure_future(anext(stream))
    await send("/hub/mcp", "tools/call", {"name": tool, "arguments": {}})
    changed = await asyncio.wait_for(waiting, WAIT)
    again = asyncio.ensure_future(anext(stream))
    done, _ = await asyncio.wait({again}, timeout=1.0)  # a second copy would follow at once
    again.cancel()

    assert changed["method"] == "notifications/tools/list_changed"
    assert changed["params"]["_meta"] == {"io.modelcontextprotocol/subscriptionId": 7}
    assert not done


def test_the_manifest_lists_the_sources_a_hub_composes() -> None:
    manifest = endpoint_registry("tests.gateway.urls").manifest()

    hub = next(entry for entry in manifest["endpoints"] if entry["name"] == "gw-hub")
    healths = {source.pop("health", None) for source in hub["sources"][1:]}  # as the earlier tests left them
    assert healths <= {"unknown", "up", "degraded", "down"}
    assert hub["sources"] == [
        {"kind": "registry", "name": "interceptor-tests", "namespace": ""},
        {"kind": "remote", "name": "sdk", "namespace": "sdk"},
        {"kind": "remote", "name": "stdio", "namespace": "io"},
        {"kind": "remote", "name": "gateway gw-hub", "namespace": "down"},
    ]


def test_resource_uris_take_the_namespace_before_their_scheme_and_lose_it_again() -> None:
    source = RemoteSource("sdk", namespace="gh")

    assert source.outer_uri("file:///notes.txt") == "gh+file:///notes.txt"
    assert source.inner_uri("gh+file:///notes.txt") == "file:///notes.txt"
    assert source.inner_uri("file:///notes.txt") is None
    assert (source.outer_name("create_issue"), source.inner_name("gh_create_issue")) == (
        "gh_create_issue",
        "create_issue",
    )


def hub(*servers: Any) -> Endpoint:
    return Endpoint("h", name="h", mode="server", registry=Registry("empty"), servers=list(servers))


def test_hub_entries_with_mistakes_are_e141() -> None:
    assert _hub_problems(hub({"SERVER": "a", "NAME": "x"}, {"SERVER": "b", "NAMESPACE": "b", "TOOLS": "echo"})) == [
        Error(
            "Hub 'h' servers[0]: unknown key 'NAME'.",
            hint="A SERVERS name, or {'SERVER': ..., 'NAMESPACE': 'gh'} (docs/federation.md).",
            id="mcp_django_gateway.E141",
        ),
        Error(
            "Hub 'h' servers[1]: TOOLS must be a list of name patterns.",
            hint="A SERVERS name, or {'SERVER': ..., 'NAMESPACE': 'gh'} (docs/federation.md).",
            id="mcp_django_gateway.E141",
        ),
    ]


def test_two_remotes_under_one_namespace_are_e142() -> None:
    assert _hub_problems(hub({"SERVER": "a", "NAMESPACE": "gh"}, {"SERVER": "b", "NAMESPACE": "gh"})) == [
        Error(
            "Hub 'h': namespace 'gh' is given to 2 of its sources.",
            hint="Give each remote server of a hub a NAMESPACE of its own.",
            id="mcp_django_gateway.E142",
        )
    ]


def test_a_local_tool_inside_a_remotes_namespace_is_e143() -> None:
    local = Registry("local")

    @local.tool
    def gh_sync() -> str:
        """A local tool whose name a remote's namespace would claim."""
        return "synced"

    servers = [{"SERVER": "github", "NAMESPACE": "gh"}]
    endpoint = Endpoint("h", name="h", mode="server", registry=local, servers=servers)
    assert _hub_problems(endpoint) == [
        Error(
            "Hub 'h': local 'gh_sync' is in the namespace of 'github'.",
            hint="Rename the tool or prompt, or give the server another NAMESPACE.",
            id="mcp_django_gateway.E143",
        )
    ]
