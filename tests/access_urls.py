"""A URLconf for the access tests: static declarations and providers at every scope, on endpoints of every mode.

- `/mcp` (server) and `/mcp/adapter` (adapter): the two default modes, each with its own items;
- `/combined/mcp`: both, where the static `echo` shadows the provider's `echo`;
- `/open/mcp`: the static registry for anonymous callers;
- `/basic/mcp`: the static registry behind HTTP basic authentication only.
"""

from __future__ import annotations

from typing import Any

from django.urls import include, path
from rest_framework.authentication import BasicAuthentication

from mcp_django import Context, PromptProvider, Registry, ResourceProvider, Scope, ToolError, ToolProvider
from mcp_django.urls import endpoint, well_known_urlpatterns
from mcp_django.views import endpoint_manifest

static = Registry("access-static")


def describe(ctx: Context) -> str:
    user = getattr(ctx.user, "username", None)
    scope = ctx.scope.label if ctx.scope is not None else None
    session = ctx.session.session_id if ctx.session is not None else None
    return f"user={user} scope={scope} endpoint={ctx.endpoint.name} session={'yes' if session else 'no'}"


@static.tool
def echo(text: str) -> str:
    """Return the text unchanged (static)."""
    return f"static:{text}"


@static.tool(scope=Scope.TEAM)
def team_report() -> str:
    """A report for teams."""
    return "team report"


@static.tool(scope="SYSTEM")
def system_purge() -> str:
    """Something only the system scope may do."""
    return "purged"


@static.tool
def whoami(ctx: Context) -> str:
    """Who is calling, from a sync tool."""
    return describe(ctx)


@static.tool
async def awhoami(ctx: Context) -> str:
    """Who is calling, from an async tool."""
    return describe(ctx)


@static.resource("static://note", name="note")
def note() -> str:
    """A note everyone may read."""
    return "a note"


@static.resource("static://vault", name="vault", scope=Scope.SYSTEM)
def vault() -> str:
    """The system's vault."""
    return "gold"


@static.resource("static://items/{item}", name="item")
def item(item: str) -> str:
    """One item."""
    return f"item {item}"


@static.prompt
def greet(name: str) -> str:
    """Greet someone."""
    return f"Hello {name}"


@static.prompt(scope=Scope.TEAM)
def plan(goal: str) -> str:
    """Plan for a team goal."""
    return f"Plan: {goal}"


@static.completion(prompt="greet", argument="name")
def complete_name(value: str) -> list[str]:
    """Names that start with the value."""
    return [name for name in ("Ada", "Alan", "Grace") if name.startswith(value)]


@static.completion(prompt="plan", argument="goal")
def complete_goal(value: str) -> list[str]:
    """Goals."""
    return ["ship", "sleep"]


NO_ARGUMENTS: dict[str, Any] = {"type": "object", "properties": {}}


class GadgetTools(ToolProvider):
    """Tools listed from 'data' (sync methods)."""

    id = "tests.gadgets"
    name = "Gadgets"
    gadgets = ("gadget_a", "gadget_b", "echo")

    def list_tools(self, ctx: Context) -> list[dict[str, Any]]:
        return [{"name": name, "description": f"Gadget {name}", "inputSchema": NO_ARGUMENTS} for name in self.gadgets]

    def call_tool(self, name: str, arguments: dict[str, Any], ctx: Context) -> Any:
        if name == "gadget_b":
            raise ToolError("gadget b is broken")
        return f"provider:{name} {describe(ctx)}"


class TeamTools(ToolProvider):
    """Tools for teams (async methods)."""

    id = "tests.team"
    name = "Team tools"
    scope = Scope.TEAM

    async def list_tools(self, ctx: Context) -> list[dict[str, Any]]:
        return [{"name": "team_gadget", "description": "For teams", "inputSchema": NO_ARGUMENTS}]

    async def call_tool(self, name: str, arguments: dict[str, Any], ctx: Context) -> Any:
        return {"content": [{"type": "text", "text": f"team:{describe(ctx)}"}], "isError": False}


class SecretTools(ToolProvider):
    """A system-only tool."""

    id = "tests.secret"
    scope = Scope.SYSTEM

    def list_tools(self, ctx: Context) -> list[dict[str, Any]]:
        return [{"name": "secret_x", "description": "Secret", "inputSchema": NO_ARGUMENTS}]

    def call_tool(self, name: str, arguments: dict[str, Any], ctx: Context) -> Any:
        return "secret"


class GadgetLibrary(ResourceProvider, PromptProvider):
    """Resources, templates, prompts and completions of a provider."""

    id = "tests.library"

    def list_resources(self, ctx: Context) -> list[dict[str, Any]]:
        return [{"uri": "gadget://manual", "name": "manual", "mimeType": "text/markdown"}]

    def list_resource_templates(self, ctx: Context) -> list[dict[str, Any]]:
        return [{"uriTemplate": "gadget://parts/{part}", "name": "part"}]

    def read_resource(self, uri: str, ctx: Context) -> Any:
        if uri == "gadget://manual":
            return "# Manual"
        if uri == "gadget://parts/missing":
            return None
        return f"part {uri.rsplit('/', 1)[-1]}"

    def list_prompts(self, ctx: Context) -> list[dict[str, Any]]:
        return [
            {
                "name": "gadget_tips",
                "description": "Tips about a gadget",
                "arguments": [{"name": "topic", "required": True}],
            }
        ]

    def get_prompt(self, name: str, arguments: dict[str, str], ctx: Context) -> Any:
        return f"Tips about {arguments['topic']}"

    def complete(self, ref: Any, argument: str, value: str, context_arguments: Any, ctx: Context) -> list[str]:
        return [topic for topic in ("gears", "gizmos", "levers") if topic.startswith(value)]


PROVIDERS = [GadgetTools, TeamTools, SecretTools, GadgetLibrary]

urlpatterns = [
    *endpoint("mcp", name="server", registry=static),
    *endpoint("mcp/adapter", name="adapter", mode="adapter", providers=PROVIDERS),
    *endpoint("combined/mcp", name="combined", mode="combined", registry=static, providers=PROVIDERS),
    *endpoint("open/mcp", name="open", registry=static, allow_anonymous=True),
    *endpoint("basic/mcp", name="basic", registry=static, authentication_classes=[BasicAuthentication]),
    path("mcp/.well-known/endpoints", endpoint_manifest, name="mcp-manifest"),
    path("", include(well_known_urlpatterns)),
]
