"""The bus provider: whitelisted actions as tools, through MCPTestClient and the real view; origin, audit, check."""

from __future__ import annotations

import json
from typing import Any

import pydantic
import pytest
from django.contrib.auth.models import User
from django.test import Client, override_settings

from example_project.demo.models import Book
from mcp_django.bus import Bus, BusProvider, CallNext, Command, Empty, Err, Metadata, Ok, current_metadata
from mcp_django.checks import declarations as checks
from mcp_django.endpoints import Endpoint
from mcp_django.interceptors.audit import flush_audit_log
from mcp_django.models import ToolCallRecord
from mcp_django.providers import provider_registry
from mcp_django.testing import MCPCallError, MCPTestClient
from tests.access_support import make_caller, names, result, send

bus = Bus("provider-tests")
CALLS: list[str] = []
ORIGINS: list[str | None] = []


class Ref(pydantic.BaseModel):
    id: int


class Note(pydantic.BaseModel):
    text: str


@bus.action("notes.add", target=Ref, payload=Note, title="Add a note")
def add(target: Ref, payload: Note, meta: Metadata) -> dict[str, Any]:
    """Add a note to a thing."""
    CALLS.append("notes.add")
    current = current_metadata()
    return {"id": target.id, "note": payload.text, "origin": meta.origin, "current": current and current.origin}


@bus.action("notes.count")
async def count(target: Empty, payload: Empty, meta: Metadata) -> int:
    CALLS.append("notes.count")
    return 3


@bus.action("admin.wipe")
def wipe(target: Empty, payload: Empty, meta: Metadata) -> str:
    CALLS.append("admin.wipe")
    return "wiped"


@bus.use(priority=10)
async def remember_origin(command: Command, call_next: CallNext) -> Ok[Any] | Err:
    ORIGINS.append(command.metadata.origin)
    return await call_next(command)


class Notes(BusProvider):
    id = "tests.bus.notes"
    bus = "tests.test_bus_provider.bus"
    actions = ["notes.*"]


class Everything(BusProvider):
    id = "tests.bus.everything"
    bus = bus


@pytest.fixture(autouse=True)
def clear() -> None:
    CALLS.clear()
    ORIGINS.clear()


@pytest.fixture
async def mcp(django_user_model: type[User], transactional_db: None) -> MCPTestClient:
    user = await django_user_model.objects.acreate(username="ada")
    endpoint = Endpoint("bus/mcp", name="bus", mode="adapter", providers=[Notes])
    return MCPTestClient(endpoint, user=user)


# ---------------------------------------------------------------- in memory


async def test_only_whitelisted_actions_are_listed_with_their_schemas(mcp: MCPTestClient) -> None:
    tools = await mcp.list_tools()

    assert [tool["name"] for tool in tools] == ["notes.add", "notes.count"]
    assert tools[0]["title"] == "Add a note"
    assert tools[0]["description"] == "Add a note to a thing."
    assert tools[0]["inputSchema"] == {
        "type": "object",
        "properties": {
            "target": {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]},
            "payload": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
        },
        "required": ["target", "payload"],
        "additionalProperties": False,
    }
    shared = {"$ref": "#/$defs/Empty"}  # one model for both parts: defined once
    assert tools[1]["inputSchema"]["properties"] == {"target": shared, "payload": shared}
    assert tools[1]["inputSchema"]["$defs"]["Empty"] == {
        "type": "object",
        "description": "The target or payload of an action that takes none: an empty object, nothing else.",
        "properties": {},
        "additionalProperties": False,
    }
    assert "required" not in tools[1]["inputSchema"]


@pytest.mark.parametrize("era", ["handshake", "stateless"])
async def test_a_call_dispatches_as_the_agent_and_answers_json_text_and_structured_content(
    django_user_model: type[User], transactional_db: None, era: str
) -> None:
    user = await django_user_model.objects.acreate(username="ada")
    endpoint = Endpoint("bus/mcp", name="bus", mode="adapter", providers=[Notes])
    mcp = MCPTestClient(endpoint, user=user, era=era)  # type: ignore[arg-type]

    added = await mcp.call_tool("notes.add", {"target": {"id": 7}, "payload": {"text": "héllo"}})
    counted = await mcp.call_tool("notes.count", {})

    value = {"id": 7, "note": "héllo", "origin": "agent", "current": "agent"}
    assert {key: added[key] for key in ("content", "structuredContent")} == {
        "content": [{"type": "text", "text": json.dumps(value, ensure_ascii=False)}],
        "structuredContent": value,
    }
    assert counted["structuredContent"] == {"result": 3}
    assert counted["content"][0]["text"] == "3"
    assert ORIGINS == ["agent", "agent"]


async def test_a_bus_error_is_an_is_error_result_naming_the_field(mcp: MCPTestClient) -> None:
    answer = await mcp.call_tool("notes.add", {"target": {"id": "seven"}, "payload": {"text": "x"}})

    assert answer["isError"] is True
    assert answer["content"][0]["text"] == (
        "target.id: Input should be a valid integer, unable to parse string as an integer (invalid_target)"
    )
    assert answer["structuredContent"]["error"]["field"] == "target.id"
    assert CALLS == []


async def test_arguments_besides_target_and_payload_are_an_is_error_result(mcp: MCPTestClient) -> None:
    answer = await mcp.call_tool("notes.count", {"target": {}, "force": True})

    assert answer["isError"] is True
    assert answer["content"][0]["text"] == (
        "Unexpected argument force: pass only target and payload. (invalid_arguments)"
    )


async def test_a_non_whitelisted_action_answers_exactly_as_an_unknown_tool_and_never_runs(
    mcp: MCPTestClient,
) -> None:
    with pytest.raises(MCPCallError) as wiped:
        await mcp.call_tool("admin.wipe", {})
    with pytest.raises(MCPCallError) as unknown:
        await mcp.call_tool("admin.nothing", {})

    assert (wiped.value.code, wiped.value.message, wiped.value.data) == (-32602, "Unknown tool: admin.wipe", None)
    assert (unknown.value.code, unknown.value.message) == (-32602, "Unknown tool: admin.nothing")
    assert CALLS == []
    assert ORIGINS == []


async def test_a_non_whitelisted_action_is_refused_even_when_asked_directly() -> None:
    from mcp_django.context import Context
    from mcp_django.protocol.jsonrpc import InvalidParams
    from tests.declarations_support import make_request

    with pytest.raises(InvalidParams, match=r"Unknown tool: admin\.wipe"):
        await Notes().call_tool("admin.wipe", {}, Context(make_request()[0]))
    assert CALLS == []


async def test_without_a_whitelist_every_action_is_exposed(
    django_user_model: type[User], transactional_db: None
) -> None:
    user = await django_user_model.objects.acreate(username="ada")
    mcp = MCPTestClient(Endpoint("all/mcp", name="all", mode="adapter", providers=[Everything]), user=user)

    assert [tool["name"] for tool in await mcp.list_tools()] == ["notes.add", "notes.count", "admin.wipe"]
    assert (await mcp.call_tool("admin.wipe", {}))["structuredContent"] == {"result": "wiped"}


async def test_a_dispatch_from_python_code_carries_no_agent_origin() -> None:
    answer = await bus.dispatch("notes.add", {"id": 1}, {"text": "from a view"})

    assert answer == Ok({"id": 1, "note": "from a view", "origin": None, "current": None})
    assert ORIGINS == [None]


# ---------------------------------------------------------------- the system check


def test_a_bus_provider_without_a_whitelist_is_warning_w002(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(provider_registry, "_providers", {"tests.bus.everything": Everything()})

    [warning] = checks.check_bus_providers()

    assert warning.id == "mcp_django.W002"
    assert warning.msg == "Bus provider 'tests.bus.everything' exposes every action of its bus."
    assert warning.hint == "Set Everything.actions to glob patterns, or ['*'] to mean it."


def test_the_demo_bus_providers_have_whitelists() -> None:
    assert checks.check_bus_providers() == []


def test_a_bus_provider_does_not_expose_an_action_whose_name_ends_in_a_newline() -> None:
    assert Notes().exposes("notes.add")
    assert not Notes().exposes("notes.add\n")


# ---------------------------------------------------------------- the demo, through the real view


@pytest.mark.django_db
def test_the_demo_bus_actions_reach_each_scope_on_the_adapter_endpoint(client: Client) -> None:
    alice, bob = make_caller("alice"), make_caller("bob", "mcp-team")

    alice_tools = names(client, "tools/list", path="/mcp/adapter", caller=alice)
    bob_tools = names(client, "tools/list", path="/mcp/adapter", caller=bob)

    assert [name for name in alice_tools if name.startswith("catalogue.")] == ["catalogue.stats"]
    assert [name for name in bob_tools if name.startswith("catalogue.")] == [
        "catalogue.stats",
        "catalogue.book.rename",
        "catalogue.book.describe",
    ]
    refused = json.loads(
        send(
            client,
            "tools/call",
            {"name": "catalogue.book.rename", "arguments": {"target": {"id": 1}, "payload": {"title": "x"}}},
            path="/mcp/adapter",
            caller=alice,
        ).content
    )
    assert refused["error"]["message"] == "Unknown tool: catalogue.book.rename"


@pytest.mark.django_db
def test_a_demo_action_renames_a_book_through_the_view(client: Client) -> None:
    bob = make_caller("bob", "mcp-team")
    book = Book.objects.create(title="Dune", author="Frank Herbert", year=1965)
    arguments = {"target": {"id": book.pk}, "payload": {"title": "Dune Messiah"}}

    renamed = result(
        client, "tools/call", {"name": "catalogue.book.rename", "arguments": arguments}, path="/mcp/adapter", caller=bob
    )
    missing = result(
        client,
        "tools/call",
        {"name": "catalogue.book.rename", "arguments": {"target": {"id": 999}, "payload": {"title": "x"}}},
        path="/mcp/adapter",
        caller=bob,
    )
    stats = result(client, "tools/call", {"name": "catalogue.stats", "arguments": {}}, path="/mcp/adapter", caller=bob)

    assert renamed["structuredContent"] == {"id": book.pk, "title": "Dune Messiah", "previous": "Dune"}
    assert Book.objects.get(pk=book.pk).title == "Dune Messiah"
    assert (missing["isError"], missing["content"][0]["text"]) == (True, "No book has the id 999. (not_found)")
    assert stats["structuredContent"] == {
        "books": 1,
        "authors": 1,
        "oldest": 1965,
        "newest": 1965,
        "ids": [book.pk],
    }


@pytest.mark.django_db(transaction=True)
def test_the_audit_trail_records_a_bus_tool_call_with_origin_agent(client: Client, settings: Any) -> None:
    bob = make_caller("bob", "mcp-team")
    book = Book.objects.create(title="Emma", author="Jane Austen", year=1815)
    audit = {"INTERCEPTORS": ["mcp_django.interceptors.audit.AuditSinkInterceptor"]}
    arguments = {"target": {"id": book.pk}, "payload": {"summary": "A matchmaker."}}

    with override_settings(MCP_DJANGO={**settings.MCP_DJANGO, **audit}):
        result(
            client,
            "tools/call",
            {"name": "catalogue.book.describe", "arguments": arguments},
            path="/mcp/adapter",
            caller=bob,
        )
        assert flush_audit_log(timeout=10)

    record = ToolCallRecord.objects.get()
    assert (record.tool, record.origin, record.user_id, record.outcome) == (
        "catalogue.book.describe",
        "agent",
        bob.user.pk,
        "ok",
    )
    assert record.arguments == arguments
