"""The extension seam: what an installed extension brings to the endpoints that serve it (docs/extensions.md)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from django.core.checks import Error
from django.test import override_settings

from mcp_django.checks import check_tool_runners
from mcp_django.endpoints import Endpoint
from mcp_django.extensions import Extension, check_extensions, installed_extensions, load_extensions
from mcp_django.protocol.context import RequestContext
from mcp_django.protocol.features.base import MethodSpec, Server
from mcp_django.protocol.hooks import CallNext, OperationHook
from mcp_django.registry import Registry
from mcp_django.sources import Source
from mcp_django.testing import MCPTestClient, assert_mcp_error
from mcp_django.urls import endpoint

RECEIPTS = "example.com/receipts"

served_registry = Registry("served-by-the-extension")


@served_registry.tool
def stamp(text: str) -> str:
    """Stamp a receipt."""
    return f"stamped {text}"


async def count_receipts(server: Server, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]:
    return {"receipts": 3}


class Tally:
    """A hook that counts the operations it sees, in the order it sees them."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    async def __call__(
        self, method: str, params: dict[str, Any], ctx: RequestContext, call_next: CallNext
    ) -> dict[str, Any]:
        self.seen.append(method)
        return await call_next(params)


class ReceiptsExtension(Extension):
    """An extension that advertises a capability, adds a method, a hook and a source."""

    identifier = RECEIPTS

    def __init__(self, served: bool = True) -> None:
        self.served = served
        self.tally = Tally()

    def capability(self, endpoint: Any) -> Mapping[str, Any] | None:
        return {"version": "1"} if self.served else None

    def methods(self, endpoint: Any) -> Sequence[MethodSpec]:
        return (MethodSpec("receipts/count", count_receipts, operation=False),)

    def hooks(self, endpoint: Any) -> Sequence[OperationHook]:
        return (self.tally,)

    def sources(self, endpoint: Any) -> Sequence[Source]:
        return (served_registry.source(),)


class NotAnExtension:
    identifier = "example.com/nothing"


def _client(extension: Extension) -> MCPTestClient:
    endpoint = Endpoint(
        "ext/mcp", name="ext", mode="adapter", providers=[], allow_anonymous=True, extensions=[extension]
    )
    return MCPTestClient(endpoint, era="stateless")


@pytest.mark.django_db
async def test_a_served_extension_is_advertised_and_adds_its_method_hook_and_source() -> None:
    extension = ReceiptsExtension()
    client = _client(extension)

    discovered = await client.request("server/discover")
    assert discovered["capabilities"]["extensions"][RECEIPTS] == {"version": "1"}
    assert (await client.request("receipts/count"))["receipts"] == 3
    assert [tool["name"] for tool in await client.list_tools()] == ["stamp"]
    result = await client.call_tool("stamp", {"text": "r1"})
    assert result["content"][0]["text"] == "stamped r1"
    assert extension.tally.seen == ["tools/list", "tools/call"]


@pytest.mark.django_db
async def test_an_extension_whose_capability_is_none_brings_nothing_to_that_endpoint() -> None:
    extension = ReceiptsExtension(served=False)
    client = _client(extension)

    discovered = await client.request("server/discover")
    assert RECEIPTS not in discovered["capabilities"].get("extensions", {})
    assert "tools" not in discovered["capabilities"]  # nor its source
    with assert_mcp_error(-32601):
        await client.request("receipts/count")
    with assert_mcp_error(-32601):
        await client.call_tool("stamp", {"text": "r1"})
    assert extension.tally.seen == []


def test_an_extension_installed_by_an_app_config_is_listed_once() -> None:
    from django.apps import apps

    tasks_config = apps.get_app_config("mcp_django_tasks")
    extensions, problems = load_extensions([], [tasks_config, tasks_config])
    assert [extension.identifier for extension in extensions] == ["io.modelcontextprotocol/tasks"]
    assert problems == [
        (
            "mcp_django.E120",
            "Two extensions have the identifier 'io.modelcontextprotocol/tasks'.",
            f"Remove one of them from {tasks_config.label}.mcp_extensions (the first one is served).",
        )
    ]


def test_the_settings_extensions_come_before_those_of_the_apps() -> None:
    with override_settings(MCP_DJANGO={"EXTENSIONS": ["tests.test_extensions.ReceiptsExtension"]}):
        identifiers = [extension.identifier for extension in installed_extensions()]
    assert identifiers[0] == RECEIPTS
    assert "io.modelcontextprotocol/tasks" in identifiers


def _messages(entries: list[Any]) -> list[tuple[str, str, str]]:
    with override_settings(MCP_DJANGO={"EXTENSIONS": entries}):
        return [
            (message.id or "", message.msg, message.hint or "")
            for message in check_extensions()
            if message.id in ("mcp_django.E120", "mcp_django.E121", "mcp_django.E122")
        ]


def test_check_e120_reports_two_extensions_with_one_identifier() -> None:
    assert _messages(["tests.test_extensions.ReceiptsExtension", ReceiptsExtension]) == [
        (
            "mcp_django.E120",
            "Two extensions have the identifier 'example.com/receipts'.",
            "Remove one of them from MCP_DJANGO['EXTENSIONS'] (the first one is served).",
        )
    ]


def test_check_e121_reports_an_extension_that_cannot_be_imported() -> None:
    assert _messages(["shop.nowhere.Receipts"]) == [
        (
            "mcp_django.E121",
            "Extension 'shop.nowhere.Receipts' cannot be imported.",
            "Fix the dotted path in MCP_DJANGO['EXTENSIONS'] (\"No module named 'shop'\").",
        )
    ]


def test_check_e122_reports_an_entry_that_is_not_an_extension() -> None:
    assert _messages(["tests.test_extensions.NotAnExtension"]) == [
        (
            "mcp_django.E122",
            "'tests.test_extensions.NotAnExtension' is not an extension.",
            "Name a subclass of mcp_django.extensions.Extension with an identifier in MCP_DJANGO['EXTENSIONS'].",
        )
    ]


def test_an_endpoint_refuses_an_extension_that_is_not_one() -> None:
    endpoint = Endpoint("ext/mcp", name="ext-bad", mode="adapter", extensions=["tests.test_extensions.NotAnExtension"])
    with pytest.raises(ValueError, match="is not an extension"):
        endpoint.served_extensions  # noqa: B018


task_registry = Registry("declared-as-tasks")


@task_registry.tool(task="optional")
def long_report(rows: int) -> str:
    """Build a long report."""
    return f"{rows} rows"


urlpatterns = endpoint("no-extensions/mcp", name="no-extensions", registry=task_registry, extensions=[])
"""A URLconf (this module) whose one endpoint declares a task tool and offers no extension to run it."""


def test_the_tasks_extension_runs_the_example_projects_task_tools() -> None:
    assert check_tool_runners() == []


def test_check_e123_reports_task_tools_that_no_extension_runs() -> None:
    with override_settings(ROOT_URLCONF="tests.test_extensions"):
        assert check_tool_runners() == [
            Error(
                "Tools declared as tasks (long_report), but no extension runs tasks.",
                hint="Add 'mcp_django.tasks' to INSTALLED_APPS (docs/tasks.md), or drop task= from them.",
                id="mcp_django.E123",
            )
        ]
