"""The extension seam: what an installed extension brings to the endpoints that serve it (docs/extensions.md)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from django.core.checks import Error, Warning
from django.test import override_settings

from mcp_django.checks.endpoints import check_endpoint_extensions, check_tool_runners
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


TASKS = "io.modelcontextprotocol/tasks"


def _offered(**options: Any) -> list[str]:
    served = Endpoint("ext/mcp", name="ext-offered", mode="adapter", providers=[], **options).served_extensions
    return [extension.identifier for extension in served.offered]


def test_an_endpoint_s_own_extensions_are_offered_after_the_installed_ones() -> None:
    installed = [extension.identifier for extension in installed_extensions()]

    assert TASKS in installed
    assert _offered() == _offered(extensions=None) == installed
    assert _offered(extensions=[ReceiptsExtension]) == [*installed, RECEIPTS]


def test_an_endpoint_s_own_extension_takes_the_place_of_the_installed_one_with_its_identifier() -> None:
    class QuietTasks(Extension):
        identifier = TASKS

    endpoint = Endpoint("ext/mcp", name="ext-quiet", mode="adapter", providers=[], extensions=[QuietTasks])
    offered = endpoint.served_extensions.offered

    installed = [e.identifier for e in installed_extensions()]
    assert [extension.identifier for extension in offered] == installed
    assert [type(extension) for extension in offered if extension.identifier == TASKS] == [QuietTasks]
    assert endpoint.tool_runner is None  # the installed tasks extension's runner is not there


def test_an_endpoint_excludes_installed_extensions_by_identifier() -> None:
    endpoint = Endpoint("ext/mcp", name="ext-excluding", mode="adapter", providers=[], exclude_extensions=[TASKS])

    assert TASKS not in [extension.identifier for extension in endpoint.served_extensions.offered]
    assert endpoint.tool_runner is None


def test_an_endpoint_refuses_one_string_for_a_list_of_extensions() -> None:
    with pytest.raises(ValueError, match="take lists, not one string"):
        Endpoint("ext/mcp", name="ext-string", mode="adapter", exclude_extensions=TASKS)


def test_the_checks_read_each_endpoint_s_extensions_and_run_those_only_endpoints_name_once() -> None:
    with override_settings(ROOT_URLCONF="tests.extensions_urls"):
        from mcp_django.endpoints import get_endpoint

        messages = check_endpoint_extensions()
        installed = ", ".join(sorted({extension.identifier for extension in installed_extensions()}))
        assert messages == [
            Warning("Receipts are not printed.", hint="Plug in the printer.", id="tests.W001"),
            Error(  # the endpoints in the order of their paths
                "Extension 'tests.extensions_urls.NotThere' cannot be imported.",
                hint=messages[1].hint,
                obj=get_endpoint("three"),
                id="mcp_django.E121",
            ),
            Error(
                "Excluded extension 'example.com/missing' is not installed.",
                hint=f"Name one of: {installed}.",
                obj=get_endpoint("two"),
                id="mcp_django.E151",
            ),
        ]
        assert str(messages[1].hint).startswith("Fix the dotted path in the endpoint's extensions= (")


task_registry = Registry("declared-as-tasks")


@task_registry.tool(task="optional")
def long_report(rows: int) -> str:
    """Build a long report."""
    return f"{rows} rows"


urlpatterns = endpoint(
    "no-extensions/mcp",
    name="no-extensions",
    registry=task_registry,
    exclude_extensions=["io.modelcontextprotocol/tasks"],
)
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
