"""Providers: base classes that fail loudly, the registry apps fill through `mcp_providers`, and its checks."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.test import override_settings

from mcp_django.checks.declarations import check_providers
from mcp_django.checks.endpoints import check_endpoints
from mcp_django.checks.settings import check_scopes_and_authentication, check_settings
from mcp_django.context import Context
from mcp_django.endpoints import Endpoint
from mcp_django.protocol import Connection, InvalidParams, MessageHandler, RequestContext
from mcp_django.providers import PromptProvider, ProviderRegistry, ResourceProvider, ToolProvider, provider_registry
from mcp_django.scopes import Scope
from tests.declarations_support import make_request


class Listed(ToolProvider):
    id = "tests.listed"

    def list_tools(self, ctx: Context) -> list[dict[str, Any]]:
        return []

    def call_tool(self, name: str, arguments: dict[str, Any], ctx: Context) -> str:
        return name


class Unnamed(ToolProvider):
    def list_tools(self, ctx: Context) -> list[dict[str, Any]]:
        return []

    def call_tool(self, name: str, arguments: dict[str, Any], ctx: Context) -> str:
        return name


class HalfDone(ToolProvider):
    id = "tests.half"

    def list_tools(self, ctx: Context) -> list[dict[str, Any]]:
        return []


class Clash(Listed):
    """Another class with `Listed`'s id."""


def app(*providers: Any, label: str = "shop") -> Any:
    return SimpleNamespace(label=label, mcp_providers=list(providers))


def problems(*providers: Any) -> list[tuple[str, str, str]]:
    registry = ProviderRegistry()
    registry.load([app(*providers)])
    return registry.problems


@pytest.mark.parametrize(
    ("base", "method", "args"),
    [
        (ToolProvider, "list_tools", 1),
        (ToolProvider, "call_tool", 3),
        (ResourceProvider, "list_resources", 1),
        (ResourceProvider, "read_resource", 2),
        (PromptProvider, "list_prompts", 1),
        (PromptProvider, "get_prompt", 3),
    ],
)
def test_a_method_not_overridden_fails_loudly(base: type, method: str, args: int) -> None:
    with pytest.raises(NotImplementedError, match=f"{base.__name__} must implement {method}()"):
        getattr(base(), method)(*([None] * args))


def test_optional_methods_default_to_nothing() -> None:
    ctx = Context(make_request()[0])

    assert list(ResourceProvider().list_resource_templates(ctx)) == []  # type: ignore[arg-type]
    assert list(ToolProvider().complete({}, "a", "", {}, ctx)) == []  # type: ignore[arg-type]


def test_apps_register_providers_by_dotted_path_class_or_instance_in_order() -> None:
    registry = ProviderRegistry()
    registry.load([app("tests.access.test_providers.Listed"), app(Unnamed, label="blog")])

    assert [provider.id for provider in registry] == ["tests.listed", "tests.access.test_providers.Unnamed"]
    assert registry.get("tests.listed").name == "Listed"
    assert registry.problems == []


def test_the_registry_is_frozen_after_loading() -> None:
    registry = ProviderRegistry()
    registry.freeze()

    with pytest.raises(RuntimeError, match="The provider registry is frozen"):
        registry.add(Listed)


def test_the_project_registry_holds_the_demo_providers_loaded_in_ready() -> None:
    assert provider_registry.frozen
    assert [provider.id for provider in provider_registry] == [
        "demo.books",
        "demo.authors",
        "demo.models",
        "demo.bus.reading",
        "demo.bus.editing",
        "demo.book_toolset",
        "demo.book_api",
        "demo.catalogue_stats",
        "demo.book_ninja",
        "demo.book_admin_actions",
    ]
    with pytest.raises(LookupError, match="No MCP provider has the id 'nope'"):
        provider_registry.get("nope")


def test_an_unimportable_provider_path_is_error_e009() -> None:
    [(check_id, message, hint)] = problems("shop.mcp.Missing")

    assert check_id == "mcp_django.E009"
    assert message == "shop.mcp_providers names 'shop.mcp.Missing', which cannot be imported."
    assert hint == "Fix the dotted path (\"No module named 'shop'\")."


def test_something_that_is_not_a_provider_is_error_e010() -> None:
    assert problems("tests.access.test_providers.app") == [
        (
            "mcp_django.E010",
            "shop.mcp_providers names 'tests.access.test_providers.app', which is not a provider.",
            "Subclass mcp_django.providers.ToolProvider, ResourceProvider or PromptProvider.",
        )
    ]


def test_two_providers_with_one_id_are_error_e011() -> None:
    assert problems(Listed, Clash) == [
        (
            "mcp_django.E011",
            "Two providers have the id 'tests.listed'.",
            "Give 'tests.access.test_providers.Clash' an id of its own (class attribute `id`).",
        )
    ]


def test_a_provider_missing_a_required_method_is_error_e012() -> None:
    assert problems(HalfDone) == [
        (
            "mcp_django.E012",
            "Provider 'tests.access.test_providers.HalfDone' does not implement call_tool.",
            "Override call_tool() in HalfDone.",
        )
    ]


def test_the_provider_check_reports_each_problem(monkeypatch: pytest.MonkeyPatch) -> None:
    registry = ProviderRegistry()
    registry.load([app(Listed, Clash)])
    monkeypatch.setattr("mcp_django.providers.provider_registry", registry)

    [error] = check_providers()

    assert (error.id, error.msg) == ("mcp_django.E011", "Two providers have the id 'tests.listed'.")


# ---------------------------------------------------------------- endpoint, scope and authentication checks


@override_settings(ROOT_URLCONF="tests.access.urls_duplicate")
def test_two_endpoints_on_one_path_are_error_e013_naming_the_path() -> None:
    [error] = check_endpoints()

    assert error.id == "mcp_django.E013"
    assert error.msg == "Two MCP endpoints are mounted at '/team/mcp' ('team' and 'other-team')."
    assert error.hint == "Each endpoint must mount at a distinct path."


@override_settings(ROOT_URLCONF="tests.access.urls_unknown_provider")
def test_an_endpoint_naming_an_unknown_provider_is_error_e014() -> None:
    [error] = check_endpoints()

    assert error.id == "mcp_django.E014"
    assert error.msg == "Endpoint 'ops' names an unknown provider 'shop.nothing'."
    assert error.hint == "Use the id of a provider an app lists in mcp_providers."


def test_the_example_projects_endpoints_pass_the_check() -> None:
    assert check_endpoints() == []


@override_settings(MCP_DJANGO={"SCOPE_GROUPS": {"mcp-team": "TEAM", "ops": "admin"}})
def test_a_scope_group_naming_no_scope_is_error_e015() -> None:
    [error] = check_scopes_and_authentication()

    assert error.id == "mcp_django.E015"
    assert error.msg == "MCP_DJANGO['SCOPE_GROUPS'] grants 'ops' no scope."
    assert error.hint == "'admin' is not a scope: use 'USER', 'TEAM' or 'SYSTEM'."


@override_settings(MCP_DJANGO={"DEFAULT_AUTHENTICATION_CLASSES": ["shop.auth.Nope", "mcp_django.scopes.Scope"]})
def test_an_authentication_class_that_is_not_one_is_error_e016() -> None:
    errors = check_scopes_and_authentication()

    assert [(error.id, error.msg) for error in errors] == [
        ("mcp_django.E016", "MCP_DJANGO['DEFAULT_AUTHENTICATION_CLASSES'] has 'shop.auth.Nope'."),
        ("mcp_django.E016", "MCP_DJANGO['DEFAULT_AUTHENTICATION_CLASSES'] has 'mcp_django.scopes.Scope'."),
    ]
    assert errors[0].hint == "Name an authentication class, e.g. 'mcp_django.auth.TokenAuthentication'."


def test_token_authentication_without_the_authtoken_app_is_error_e017(settings: Any) -> None:
    settings.INSTALLED_APPS = [app for app in settings.INSTALLED_APPS if app != "rest_framework.authtoken"]

    [error] = check_scopes_and_authentication()

    assert error.id == "mcp_django.E017"
    assert error.msg == "TokenAuthentication needs 'rest_framework.authtoken' installed."
    assert error.hint == "Add 'rest_framework.authtoken' to INSTALLED_APPS and migrate."


@override_settings(MCP_DJANGO={"SCOPE_GROUPS": ["mcp-team"], "AUTHORIZATION_SERVERS": "https://a"})
def test_scope_groups_and_authorization_servers_of_the_wrong_type_are_error_e004() -> None:
    messages = {error.msg for error in check_settings() if error.id == "mcp_django.E004"}

    assert messages == {
        "MCP_DJANGO['SCOPE_GROUPS'] must be a dict of group names.",
        "MCP_DJANGO['AUTHORIZATION_SERVERS'] must be a list of URLs.",
    }


# ---------------------------------------------------------------- finding one tool


class FindsOne(ToolProvider):
    """Finds a tool by name; its list is never needed for a call."""

    id = "tests.finds_one"

    def list_tools(self, ctx: Context) -> list[dict[str, Any]]:
        raise AssertionError("a call to a provider with get_tool() must not list its tools")

    def get_tool(self, name: str, ctx: Context) -> dict[str, Any] | None:
        return {"name": name, "inputSchema": {"type": "object"}} if name == "known" else None

    def call_tool(self, name: str, arguments: dict[str, Any], ctx: Context) -> str:
        return f"called {name} with {arguments}"


async def _user_scope(ctx: RequestContext) -> Scope:
    return Scope.USER


def test_a_provider_that_finds_one_tool_is_called_without_listing_its_tools() -> None:
    backend = Endpoint("x", name="finds-one", mode="adapter", providers=[FindsOne]).build_backend(_user_scope)
    ctx = make_request()[0]

    called = async_to_sync(backend.call_tool)("known", {"a": 1}, ctx)

    assert called == {"content": [{"type": "text", "text": "called known with {'a': 1}"}]}
    with pytest.raises(InvalidParams, match="Unknown tool: other"):
        async_to_sync(backend.call_tool)("other", {}, ctx)


class Held(ToolProvider):
    """Returns the same tuple of dicts on every call, twice one name (the first wins)."""

    id = "tests.held"
    tools = (
        {"name": "a", "inputSchema": {"type": "object"}},
        {"name": "b", "inputSchema": {"type": "object"}},
        {"name": "a", "description": "a repeat, never listed", "inputSchema": {"type": "object"}},
    )

    def list_tools(self, ctx: Context) -> tuple[dict[str, Any], ...]:
        return self.tools

    def call_tool(self, name: str, arguments: dict[str, Any], ctx: Context) -> str:
        return name


def test_what_a_provider_holds_is_listed_once_per_name_and_never_changed_by_a_hook() -> None:
    async def rename(method: str, params: dict[str, Any], ctx: RequestContext, call_next: Any) -> dict[str, Any]:
        result: dict[str, Any] = await call_next(params)
        for tool in result.get("tools", ()):
            tool["name"] = "renamed"  # a hook rewriting the page in place
        return result

    endpoint = Endpoint("x", name="held", mode="adapter", providers=[Held], allow_anonymous=True, interceptors=[])
    backend = endpoint.build_backend(_user_scope)
    handler = MessageHandler(backend, server_info={"name": "t", "version": "1"}, hooks=[rename])
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    reply: Any = async_to_sync(handler.handle)(message, Connection(sessions=False))

    assert [tool["name"] for tool in reply["result"]["tools"]] == ["renamed", "renamed"]
    assert [tool["name"] for tool in Held.tools] == ["a", "b", "a"]
    assert "description" not in reply["result"]["tools"][0]
