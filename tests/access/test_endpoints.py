"""Endpoints of every mode through the real view: what each serves, to whom, and that nothing leaks across."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import Client

from mcp_django.endpoints import Endpoint, EndpointRegistry, canonical_path, endpoint_registry, get_endpoint
from tests.access_support import Caller, names, result, send, text
from tests.http_support import HANDSHAKE_VERSION, initialize, post, request

pytestmark = [pytest.mark.urls("tests.access_urls"), pytest.mark.django_db]

STATIC_TOOLS = ["awhoami", "echo", "whoami"]
GADGETS = ["gadget_a", "gadget_b", "echo"]


# ---------------------------------------------------------------- what each user sees


def test_each_user_sees_exactly_the_static_tools_their_scope_reaches(
    client: Client, alice: Caller, bob: Caller, carol: Caller
) -> None:
    assert names(client, "tools/list", caller=alice) == STATIC_TOOLS
    assert names(client, "tools/list", caller=bob) == [*STATIC_TOOLS[:2], "team_report", "whoami"]
    assert names(client, "tools/list", caller=carol) == [*STATIC_TOOLS[:2], "system_purge", "team_report", "whoami"]


def test_each_user_sees_exactly_the_provider_tools_their_scope_reaches(
    client: Client, alice: Caller, bob: Caller, carol: Caller
) -> None:
    adapter = "/mcp/adapter"
    assert names(client, "tools/list", path=adapter, caller=alice) == GADGETS
    assert names(client, "tools/list", path=adapter, caller=bob) == [*GADGETS, "team_gadget"]
    assert names(client, "tools/list", path=adapter, caller=carol) == [*GADGETS, "team_gadget", "secret_x"]


def test_resources_and_prompts_above_the_callers_scope_are_not_listed(
    client: Client, alice: Caller, carol: Caller
) -> None:
    assert names(client, "resources/list", caller=alice) == ["static://note"]
    assert names(client, "resources/list", caller=carol) == ["static://note", "static://vault"]
    assert names(client, "prompts/list", caller=alice) == ["greet"]
    assert names(client, "prompts/list", caller=carol) == ["greet", "plan"]


def test_what_the_scope_does_not_reach_answers_as_unknown_on_call_read_get_and_complete(
    client: Client, alice: Caller
) -> None:
    def error(method: str, params: Mapping[str, Any]) -> Any:
        return json.loads(send(client, method, dict(params), caller=alice).content)["error"]

    assert error("tools/call", {"name": "team_report"})["message"] == "Unknown tool: team_report"
    assert error("resources/read", {"uri": "static://vault"})["data"] == {"uri": "static://vault"}
    assert error("prompts/get", {"name": "plan", "arguments": {"goal": "x"}})["message"] == "Unknown prompt: plan"
    completion = {"ref": {"type": "ref/prompt", "name": "plan"}, "argument": {"name": "goal", "value": ""}}
    assert error("completion/complete", completion)["message"] == "Unknown prompt: plan"


def test_a_team_member_calls_the_team_tool_and_a_provider_tool_of_their_scope(client: Client, bob: Caller) -> None:
    assert text(result(client, "tools/call", {"name": "team_report"}, caller=bob)) == "team report"
    called = result(client, "tools/call", {"name": "team_gadget"}, path="/mcp/adapter", caller=bob)
    assert text(called) == "team:user=bob scope=team endpoint=adapter session=no"


def test_removing_a_group_membership_hides_its_tools_on_the_next_request(client: Client, bob: Caller) -> None:
    assert "team_report" in names(client, "tools/list", caller=bob)

    bob.user.groups.clear()

    assert "team_report" not in names(client, "tools/list", caller=bob)
    assert json.loads(send(client, "tools/call", {"name": "team_report"}, caller=bob).content)["error"]["message"] == (
        "Unknown tool: team_report"
    )


def test_a_superuser_reaches_the_system_scope_without_any_group(client: Client) -> None:
    from tests.access_support import make_caller

    root = make_caller("root", is_superuser=True)

    assert "system_purge" in names(client, "tools/list", caller=root)


# ---------------------------------------------------------------- providers on the adapter


def test_a_provider_tool_error_is_an_is_error_result(client: Client, alice: Caller) -> None:
    called = result(client, "tools/call", {"name": "gadget_b"}, path="/mcp/adapter", caller=alice)

    assert called["isError"] is True
    assert text(called) == "gadget b is broken"


def test_provider_resources_templates_and_prompts_are_listed_read_and_rendered(client: Client, alice: Caller) -> None:
    adapter = {"path": "/mcp/adapter", "caller": alice}

    assert names(client, "resources/list", **adapter) == ["gadget://manual"]
    assert names(client, "resources/templates/list", **adapter) == ["gadget://parts/{part}"]
    manual = result(client, "resources/read", {"uri": "gadget://manual"}, **adapter)
    assert manual["contents"] == [{"uri": "gadget://manual", "mimeType": "text/markdown", "text": "# Manual"}]
    part = result(client, "resources/read", {"uri": "gadget://parts/cog"}, **adapter)
    assert part["contents"][0]["text"] == "part cog"
    tips = result(client, "prompts/get", {"name": "gadget_tips", "arguments": {"topic": "gears"}}, **adapter)
    assert tips["description"] == "Tips about a gadget"
    assert tips["messages"][0]["content"]["text"] == "Tips about gears"
    completion = {"ref": {"type": "ref/prompt", "name": "gadget_tips"}, "argument": {"name": "topic", "value": "g"}}
    assert result(client, "completion/complete", completion, **adapter)["completion"]["values"] == ["gears", "gizmos"]


def test_a_provider_resource_returning_none_is_resource_not_found(client: Client, alice: Caller) -> None:
    response = send(client, "resources/read", {"uri": "gadget://parts/missing"}, path="/mcp/adapter", caller=alice)

    assert json.loads(response.content)["error"]["data"] == {"uri": "gadget://parts/missing"}


def test_a_provider_prompt_checks_its_required_arguments(client: Client, alice: Caller) -> None:
    response = send(client, "prompts/get", {"name": "gadget_tips"}, path="/mcp/adapter", caller=alice)

    assert json.loads(response.content)["error"] == {
        "code": -32602,
        "message": "Missing required arguments for prompt gadget_tips: topic",
    }


# ---------------------------------------------------------------- no leak between server and adapter


LEAKS = [
    # (method, params naming the other side's item, params naming nothing at all)
    ("tools/call", {"name": "{}"}, "tool"),
    ("resources/read", {"uri": "{}"}, "resource"),
    ("prompts/get", {"name": "{}", "arguments": {"topic": "x", "name": "x"}}, "prompt"),
    (
        "completion/complete",
        {"ref": {"type": "ref/prompt", "name": "{}"}, "argument": {"name": "x", "value": ""}},
        "prompt",
    ),
]
SERVER_ITEMS = {"tool": "whoami", "resource": "static://note", "prompt": "greet"}
ADAPTER_ITEMS = {"tool": "gadget_a", "resource": "gadget://manual", "prompt": "gadget_tips"}


def _fill(params: dict[str, object], value: str) -> dict[str, object]:
    return json.loads(json.dumps(params).replace("{}", value))


def _answer(client: Client, method: str, params: dict[str, object], path: str, caller: Caller) -> tuple[int, bytes]:
    response = send(client, method, params, path=path, caller=caller)
    return response.status_code, response.content


@pytest.mark.parametrize(("method", "params", "kind"), LEAKS)
@pytest.mark.parametrize(
    ("path", "foreign"), [("/mcp", ADAPTER_ITEMS), ("/mcp/adapter", SERVER_ITEMS)], ids=["server", "adapter"]
)
def test_the_other_endpoints_item_is_answered_byte_for_byte_as_an_unknown_one(
    client: Client,
    carol: Caller,
    path: str,
    foreign: dict[str, str],
    method: str,
    params: dict[str, object],
    kind: str,
) -> None:
    other = foreign[kind]
    unknown = other.replace("gadget", "nothing").replace("static", "nowhere").replace("whoami", "nobody")
    unknown = unknown.replace("greet", "nobody").replace("_tips", "_none")
    assert unknown != other

    status, body = _answer(client, method, _fill(params, other), path, carol)
    unknown_status, unknown_body = _answer(client, method, _fill(params, unknown), path, carol)

    assert status == unknown_status
    assert body.replace(other.encode(), b"NAME") == unknown_body.replace(unknown.encode(), b"NAME")
    assert b"error" in body


def test_neither_endpoint_lists_anything_of_the_other(client: Client, carol: Caller) -> None:
    server_tools = set(names(client, "tools/list", caller=carol))
    adapter_tools = set(names(client, "tools/list", path="/mcp/adapter", caller=carol))

    assert server_tools & adapter_tools == {"echo"}  # declared on both sides, each serving its own
    assert text(result(client, "tools/call", {"name": "echo", "arguments": {"text": "x"}}, caller=carol)) == "static:x"
    assert text(result(client, "tools/call", {"name": "echo"}, path="/mcp/adapter", caller=carol)).startswith(
        "provider:echo"
    )
    assert not set(names(client, "resources/list", caller=carol)) & set(
        names(client, "resources/list", path="/mcp/adapter", caller=carol)
    )
    assert not set(names(client, "prompts/list", caller=carol)) & set(
        names(client, "prompts/list", path="/mcp/adapter", caller=carol)
    )


def test_a_combined_endpoint_serves_both_and_static_declarations_win_a_name_clash(client: Client, bob: Caller) -> None:
    combined = {"path": "/combined/mcp", "caller": bob}

    listed = names(client, "tools/list", **combined)

    assert listed == ["awhoami", "echo", "team_report", "whoami", "gadget_a", "gadget_b", "team_gadget"]
    assert text(result(client, "tools/call", {"name": "echo", "arguments": {"text": "y"}}, **combined)) == "static:y"
    assert text(result(client, "tools/call", {"name": "gadget_a"}, **combined)).startswith("provider:gadget_a")
    assert names(client, "resources/list", **combined) == ["static://note", "gadget://manual"]


# ---------------------------------------------------------------- capabilities


def test_initialize_and_discover_advertise_each_endpoints_own_capabilities(client: Client, alice: Caller) -> None:
    init = post(client, initialize(), alice.headers, path="/mcp/adapter")
    discovered = result(client, "server/discover", path="/mcp/adapter", caller=alice)

    capabilities = json.loads(init.content)["result"]["capabilities"]
    assert {"tools", "resources", "prompts", "completions"} <= set(capabilities)
    assert {"tools", "resources", "prompts", "completions"} <= set(discovered["capabilities"])


def test_an_adapter_without_resource_providers_advertises_no_resources() -> None:
    from tests.access_urls import GadgetTools

    handler = Endpoint("x", name="tools-only", mode="adapter", providers=[GadgetTools]).build_handler()

    assert "resources" not in handler.backend.capabilities()
    assert "tools" in handler.backend.capabilities()


# ---------------------------------------------------------------- the latched route


def _open(client: Client, path: str, caller: Caller) -> str:
    response = post(client, initialize(), caller.headers, path=path)
    assert response.status_code == 200, response.content
    return str(response["Mcp-Session-Id"])


def test_a_session_opened_on_the_server_endpoint_is_unknown_on_the_adapter(client: Client, alice: Caller) -> None:
    session_id = _open(client, "/mcp", alice)

    headers = {**alice.headers, "Mcp-Session-Id": session_id, "MCP-Protocol-Version": HANDSHAKE_VERSION}
    elsewhere = post(client, request("tools/list"), headers, path="/mcp/adapter")
    home = post(client, request("tools/list"), headers, path="/mcp")

    assert elsewhere.status_code == 404
    assert json.loads(elsewhere.content)["error"] == {"code": -32600, "message": "Session not found"}
    assert home.status_code == 200


def test_a_session_presented_by_another_user_is_404(client: Client, alice: Caller, bob: Caller) -> None:
    session_id = _open(client, "/mcp", alice)

    hijack = post(client, request("tools/list"), {**bob.headers, "Mcp-Session-Id": session_id}, path="/mcp")

    assert hijack.status_code == 404
    assert json.loads(hijack.content)["error"]["message"] == "Session not found"


def test_a_tool_sees_its_user_scope_endpoint_and_session_in_sync_and_async_code(client: Client, bob: Caller) -> None:
    session_id = _open(client, "/mcp", bob)
    headers = {**bob.headers, "Mcp-Session-Id": session_id}

    for tool in ("whoami", "awhoami"):
        reply = json.loads(post(client, request("tools/call", {"name": tool, "arguments": {}}), headers).content)
        assert reply["result"]["content"][0]["text"] == "user=bob scope=team endpoint=server session=yes"


def test_stateless_requests_take_the_live_route(client: Client, carol: Caller) -> None:
    on_server = result(client, "tools/call", {"name": "whoami"}, caller=carol)
    on_combined = result(client, "tools/call", {"name": "whoami"}, path="/combined/mcp", caller=carol)

    assert text(on_server) == "user=carol scope=system endpoint=server session=no"
    assert text(on_combined) == "user=carol scope=system endpoint=combined session=no"


# ---------------------------------------------------------------- the endpoint registry and manifest


def test_the_manifest_lists_every_endpoint_with_its_path_mode_and_sources_sorted_by_path(client: Client) -> None:
    response = client.get("/mcp/.well-known/endpoints")
    registry = [{"kind": "registry", "name": "access-static", "namespace": ""}]
    providers = [
        {"kind": "providers", "name": name, "namespace": ""}
        for name in ("tests.gadgets", "tests.team", "tests.secret", "tests.library")
    ]

    assert response.status_code == 200
    assert response.json() == {
        "endpoints": [
            {"name": "basic", "path": "/basic/mcp", "mode": "server", "anonymous": False, "sources": registry},
            {
                "name": "combined",
                "path": "/combined/mcp",
                "mode": "combined",
                "anonymous": False,
                "sources": registry + providers,
            },
            {"name": "server", "path": "/mcp", "mode": "server", "anonymous": False, "sources": registry},
            {"name": "adapter", "path": "/mcp/adapter", "mode": "adapter", "anonymous": False, "sources": providers},
            {"name": "open", "path": "/open/mcp", "mode": "server", "anonymous": True, "sources": registry},
        ]
    }


def test_two_endpoints_on_the_same_canonical_path_are_refused_naming_the_path() -> None:
    first = Endpoint("mcp", name="first")
    second = Endpoint("/mcp/", name="second")

    with pytest.raises(ImproperlyConfigured) as raised:
        EndpointRegistry([("mcp", first), ("mcp/", second)])

    assert str(raised.value) == (
        "Two MCP endpoints are mounted at '/mcp' ('first' and 'second'); each endpoint must mount at a distinct path."
    )


def test_two_endpoints_with_one_name_are_refused() -> None:
    with pytest.raises(ImproperlyConfigured, match="Two MCP endpoints are named 'same'"):
        EndpointRegistry([("a", Endpoint("a", name="same")), ("b", Endpoint("b", name="same"))])


def test_one_endpoint_mounted_with_and_without_its_slash_counts_once() -> None:
    served = Endpoint("mcp", name="server")

    registry = EndpointRegistry([("mcp", served), ("mcp/", served)])

    assert registry.endpoints == [served]


def test_the_longest_prefix_resolves_on_segment_boundaries_only() -> None:
    root, server, adapter = Endpoint("", name="root"), Endpoint("mcp", name="s"), Endpoint("mcp/adapter", name="a")
    registry = EndpointRegistry([("mcp", server), ("mcp/adapter", adapter)])
    with_root = EndpointRegistry([("", root), ("mcp", server)])

    assert registry.resolve("/mcp") is server
    assert registry.resolve("/mcp/") is server
    assert registry.resolve("/mcp/adapter/x") is adapter
    assert registry.resolve("/mcp/adapterx") is server
    assert registry.resolve("/mcpx") is None
    assert registry.resolve("/other") is None
    assert with_root.resolve("/mcpx") is root


def test_canonical_paths_have_one_leading_slash_and_no_trailing_one() -> None:
    assert [canonical_path(path) for path in ("mcp", "/mcp/", "mcp//adapter", "", "/")] == [
        "/mcp",
        "/mcp",
        "/mcp/adapter",
        "/",
        "/",
    ]


def test_get_endpoint_finds_a_mounted_endpoint_by_name_or_path() -> None:
    adapter = get_endpoint("adapter")

    assert adapter.mode == "adapter"
    assert get_endpoint("/mcp/adapter/") is adapter
    assert endpoint_registry().path_of(adapter) == "/mcp/adapter"
    with pytest.raises(LookupError, match="No MCP endpoint is named 'nope'"):
        get_endpoint("nope")


def test_an_endpoint_refuses_a_mode_it_does_not_know_and_items_its_mode_does_not_serve() -> None:
    with pytest.raises(ValueError, match="mode must be one of server, adapter, combined"):
        Endpoint("x", name="x", mode="both")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="an adapter endpoint serves providers, not a registry"):
        Endpoint("x", name="x", mode="adapter", registry="mcp_django.default_registry")
    with pytest.raises(ValueError, match="a server endpoint serves a registry, not providers"):
        Endpoint("x", name="x", providers=["demo.books"])


def test_the_default_urls_serve_the_server_and_the_adapter(settings: object) -> None:
    from django.urls import get_resolver

    patterns = get_resolver("mcp_django.urls").url_patterns
    served = {
        getattr(pattern.callback, "view_initkwargs", {})["endpoint"].name: str(pattern.pattern)
        for pattern in patterns[:4:2]
    }

    assert served == {"server": "mcp", "adapter": "mcp/adapter"}
    assert endpoint_registry("mcp_django.urls").manifest()["endpoints"][1]["mode"] == "adapter"


def test_an_unknown_session_and_a_foreign_one_look_the_same(client: Client, alice: Caller) -> None:
    session_id = _open(client, "/mcp", alice)
    foreign = post(client, request("ping"), {**alice.headers, "Mcp-Session-Id": session_id}, path="/mcp/adapter")
    unknown = post(client, request("ping"), {**alice.headers, "Mcp-Session-Id": "nope"}, path="/mcp/adapter")

    assert (foreign.status_code, foreign.content) == (unknown.status_code, unknown.content)
