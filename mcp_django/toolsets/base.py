"""`Toolset`: a set of declared tools built from one Django object, served statically or as a provider.

A toolset builds its tools once, when it is instantiated, as ordinary `declarations.Tool`s: their input
schemas are compiled by `Signature`, their output schemas by `StructuredOutput`, and their sync code runs
in the tool's thread through the declaration `Runner`, exactly as for an `@mcp_django.tool` function.
The same instance can be registered on a `Registry` (the server endpoint) or named in an app's
`mcp_providers` (the adapter endpoint).
"""

from __future__ import annotations

import inspect
import io
import json
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from http import HTTPStatus
from typing import Any, Self
from urllib.parse import urlencode

from django.core.handlers.wsgi import WSGIRequest

from mcp_django.checks.support import short
from mcp_django.context import Context
from mcp_django.declarations import NAME_PATTERN, Tool, ToolAnnotations
from mcp_django.declarations.apps import app_of
from mcp_django.declarations.lean import verbose
from mcp_django.declarations.loading import failure_text, logger, short_path, source_file
from mcp_django.declarations.signatures import ArgumentsInvalid
from mcp_django.exceptions import DeclarationError
from mcp_django.permissions import fresh_user, parse_permissions
from mcp_django.providers.base import ToolProvider
from mcp_django.registry import Registry, default_registry
from mcp_django.safety.approvals import Approval, Preview, approval_rule
from mcp_django.scopes import Scope

Problem = tuple[str, str, str]
"""`(check id, message, hint)`: a misconfiguration found while building a toolset, reported by a system check."""

_toolsets: list[weakref.ref[Toolset]] = []
_failed: list[Toolset] = []  # toolsets with a problem: kept for the checks even when no tool of theirs is


def all_toolsets() -> list[Toolset]:
    """Every toolset instance still alive (registered statically or loaded as a provider), in creation order."""
    alive = [toolset for ref in _toolsets if (toolset := ref()) is not None]
    _toolsets[:] = [weakref.ref(toolset) for toolset in alive]
    return alive


class ToolsetTool(Tool):
    """A `Tool` whose arguments are closed: an argument the schema does not name is refused, not ignored.

    The function receives only the arguments the caller gave (validated and coerced), so a toolset can
    tell "not given" from an explicit null.
    """

    def __init__(self, fn: Callable[..., Any], **options: Any) -> None:
        super().__init__(fn, **options)
        self._accepted = frozenset(self.signature.names)

    def _arguments_schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        schema["additionalProperties"] = False
        for prop in schema.get("properties", {}).values():
            if "default" in prop and prop["default"] is None:
                del prop["default"]  # an optional argument left out is not given, not null
        return schema

    def _bind(self, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        given = dict(arguments) if arguments else {}
        unknown = sorted(key for key in given if key not in self._accepted)
        if unknown:
            raise ArgumentsInvalid("; ".join(f"{key}: Extra inputs are not permitted" for key in unknown))
        bound = super()._bind(given)
        return {key: value for key, value in bound.items() if key in given}


def caller(ctx: Context) -> Any:
    """The caller as a user object of this call's own, without the permissions Django cached on it.

    The user admission found may be shared by every request that presents the same credentials
    (`mcp_django.endpoints.auth_cache`), and `ModelBackend` caches a user's permissions on the instance: checked on
    the shared one, a permission granted or revoked in the admin would not count until the credential
    cache drops. A copy without those caches reads them afresh (`mcp_django.permissions.fresh_user`).
    """
    return fresh_user(ctx.user)


def caller_request(
    ctx: Context,
    method: str = "GET",
    query: Mapping[str, Any] | None = None,
    body: Mapping[str, Any] | None = None,
    *,
    path: str = "/",
    form: Mapping[str, Any] | None = None,
    server_name: str = "localhost",
    remote_addr: str = "127.0.0.1",
) -> WSGIRequest:
    """A real `HttpRequest` made by the caller of `ctx`, for view code (DRF, django-ninja, the admin).

    Args:
        ctx: the call's context; its caller becomes `request.user` (a copy with fresh permissions,
            `caller`), and is also forced the way DRF's own test client forces one (`_force_auth_user`,
            which `rest_framework.request.Request` reads): the caller was authenticated at admission.
        method: the HTTP method.
        query: the query string's parameters (lists repeat the key; booleans are `true`/`false`).
        body: a JSON body.
        path: the request's path (what URL resolution and `build_absolute_uri()` see).
        form: a form-encoded body instead (what `request.POST` reads), for the admin's views.
        server_name: the host the request names; it must be in `ALLOWED_HOSTS` where the view builds URLs.
        remote_addr: the client address (what anonymous throttles key on).

    The request is exempt from CSRF checks (`_dont_enforce_csrf_checks`, as Django's test client sets
    it): it carries no cookie, so there is no cross-site request to forge.
    """
    if form is not None:
        content = urlencode({key: _query_value(value) for key, value in form.items()}, doseq=True).encode()
        content_type = "application/x-www-form-urlencoded"
    else:
        content = json.dumps(body).encode() if body is not None else b""
        content_type = "application/json"
    query_string = urlencode({key: _query_value(value) for key, value in (query or {}).items()}, doseq=True)
    request = WSGIRequest(
        {
            "REQUEST_METHOD": method.upper(),
            "PATH_INFO": path,
            "SCRIPT_NAME": "",
            "QUERY_STRING": query_string,
            "SERVER_NAME": server_name,
            "SERVER_PORT": "443",
            "SERVER_PROTOCOL": "HTTP/1.1",
            "REMOTE_ADDR": remote_addr,
            "HTTP_ACCEPT": "application/json",
            "CONTENT_TYPE": content_type,
            "CONTENT_LENGTH": str(len(content)),
            "wsgi.input": io.BytesIO(content),
            "wsgi.url_scheme": "https",
        }
    )
    user = caller(ctx)
    request.user = user  # what AuthenticationMiddleware would have set
    request._force_auth_user = user  # type: ignore[attr-defined]  # read by rest_framework.request.Request
    request._dont_enforce_csrf_checks = True  # type: ignore[attr-defined]  # read by CsrfViewMiddleware
    return request


def http_status(code: int) -> str:
    """`"404 Not Found"`: a status code with its reason phrase, as error results name it."""
    return f"{code} {HTTPStatus(code).phrase}" if code in HTTPStatus._value2member_map_ else str(code)


def method_annotations(method: str) -> ToolAnnotations:
    """The tool annotations of an HTTP method: GET reads, POST adds, PUT/PATCH/DELETE change what exists."""
    method = method.lower()
    if method in ("get", "head"):
        return ToolAnnotations(readOnlyHint=True, openWorldHint=False)
    hints = ToolAnnotations(readOnlyHint=False, destructiveHint=method != "post", openWorldHint=False)
    if method in ("put", "delete"):
        hints["idempotentHint"] = True
    return hints


def _query_value(value: Any) -> Any:
    return ("true" if value else "false") if isinstance(value, bool) else value


def parameter(name: str, annotation: Any, default: Any = inspect.Parameter.empty) -> inspect.Parameter:
    """A keyword-only parameter of a generated tool function."""
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation, default=default)


def tool_function(
    implementation: Callable[..., Any], name: str, parameters: Sequence[inspect.Parameter], returns: Any
) -> Callable[..., Any]:
    """A function with a generated signature for `Tool` to compile: `implementation(ctx, **given arguments)`.

    Args:
        implementation: the sync code, called in the tool's thread with the `Context` first.
        name: the function's name (the tool's name).
        parameters: the tool's arguments (`parameter(...)`), compiled into its input schema.
        returns: the return annotation, compiled into its output schema.
    """

    def function(ctx: Context, **arguments: Any) -> Any:
        return implementation(ctx, **arguments)

    context = inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=Context)
    function.__name__ = function.__qualname__ = name
    function.__signature__ = inspect.Signature([context, *parameters], return_annotation=returns)  # type: ignore[attr-defined]  # read by inspect.signature
    return function


class Toolset(ToolProvider):
    """Base of toolsets: `build_tools()` returns the toolset's `Tool`s, built once per instance.

    Serve it on the adapter endpoint by naming the class in an app's `mcp_providers`, or on the server
    endpoint with `MyToolset.register()` in an app's `mcp.py`. Mistakes in the class's attributes
    do not raise: they are collected in `problems` and reported by system checks (E110-E119), and the
    tools they concern are left out.
    """

    timeout: float | None = None
    """Seconds each of the toolset's tools may run (`@tool(timeout=)`); None follows the endpoint's `tool_timeout`."""

    permissions: str | Sequence[str] = ()
    """Django permissions every tool of the toolset requires (`@tool(permissions=)`), before each tool's own."""

    apps: Mapping[str, Any] = {}
    """Views of the toolset's tools for hosts of MCP Apps, by tool name (`@tool(app=)`; docs/apps.md)."""

    approval: str | Approval | Mapping[str, str | Approval] | None = None
    """The permission of whoever must approve each call (`@tool(approval=)`): for every tool of the toolset,
    or by tool name; a tool's own comes first (docs/side-effects.md#approvals)."""

    def __init__(self) -> None:
        self.problems: list[Problem] = []
        self.tools: dict[str, Tool] = {}
        try:
            shared = parse_permissions(self.permissions)
        except TypeError:  # reported by check E191; until fixed, a name no one but a superuser holds
            shared = (f"invalid permissions {self.permissions!r}",)
        try:
            built = list(self.build_tools())
        except Exception as error:  # a toolset's mistake is a system check, never an error at start-up
            self.failed(error)
            built = []
        cap_problem = self.output_cap_problem()
        if cap_problem is not None:  # the toolset's tools are left out until it is fixed
            self.problem("mcp_django.E026", cap_problem, "Set it to a number of characters, or None.")
            built = []
        for tool in built:
            if self.atomic is not None and tool.atomic is None:
                tool.run_as(self.atomic, self.using)
            if tool.max_output_chars is None:
                tool.max_output_chars = self.max_output_chars
            tool.permissions = tuple(dict.fromkeys((*shared, *tool.permissions)))
            try:
                self._gate(tool)
            except DeclarationError as error:
                self.failed(error, tool.name)
                continue
            self.tools.setdefault(tool.name, tool)
        self._name_apps()
        _toolsets.append(weakref.ref(self))

    def _gate(self, tool: Tool) -> None:
        """Give `tool` the toolset's approval (unless it has its own) and its preview for approvers."""
        wanted = self.approval.get(tool.name) if isinstance(self.approval, Mapping) else self.approval
        if tool.approval is None:
            tool.approval = approval_rule(f"{type(self).__name__}.approval", wanted)
        tool.approval_preview = tool.approval_preview or self.approval_preview(tool)

    def approval_preview(self, tool: Tool) -> Preview | None:
        """What an approver of a call of `tool` is shown beside its arguments (a model delete: its cascade)."""
        return None

    def _name_apps(self) -> None:
        """Give the tools `apps` names their view; a name no tool has or an app that is not one is a problem."""
        owner = type(self).__name__
        for name, app in self.apps.items():
            tool = self.tools.get(name)
            if tool is None:
                self.problem(
                    "mcp_django.E203",
                    f"{owner}: apps names {short(name, 30)}, which is none of its tools.",
                    f"Name one of its tools in apps: {', '.join(self.tools)[:50] or 'it has none'}.",
                )
                continue
            try:
                tool.app = app_of(f"{owner}.apps[{name!r}]", app)
            except DeclarationError as error:
                message = f"{owner}: apps[{short(name, 30)}] is not an app."
                self.problem("mcp_django.E202", message, f"Fix it: {str(error)[:100]}.")

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {', '.join(self.tools) or 'no tools'}>"

    def build_tools(self) -> Iterable[Tool]:
        """Return the toolset's tools (called once, by `__init__`)."""
        raise NotImplementedError(f"{type(self).__name__} must implement build_tools()")

    def problem(self, check_id: str, message: str, hint: str) -> None:
        """Record a misconfiguration for the system checks (which keep the toolset: `register()` drops it)."""
        self.problems.append((check_id, message, hint))
        if self not in _failed:
            _failed.append(self)

    def failed(self, error: Exception, tool: str = "") -> None:
        """Record that building `tool` (default: the toolset's tools) raised `error`: check E260, the tool left out."""
        owner = type(self).__name__
        where = short_path(source_file(type(self).__module__), 30)
        logger.exception("%s (%s) could not build %s", owner, where, tool or "its tools", exc_info=error)
        self.problem(
            "mcp_django.E260",
            f"{owner} ({where}) could not build {short(tool, 24) if tool else 'its tools'}.",
            f"Fix {type(error).__name__}: {failure_text(error)}.",
        )

    def named(
        self, tools: list[Tool], check_id: str, hint: str = "Set basename (and plural) to letters, digits and _."
    ) -> list[Tool]:
        """`tools`, after recording a `check_id` problem (with `hint`) for each name MCP rejects."""
        for tool in tools:
            if not NAME_PATTERN.fullmatch(tool.name):
                self.problem(
                    check_id, f"{type(self).__name__}: tool name {tool.name[:40]!r} is not a valid MCP name.", hint
                )
        return tools

    @classmethod
    def register(cls, registry: Registry | None = None) -> Self:
        """Declare this toolset's tools on `registry` (default: `mcp_django.default_registry`) and return it.

        Call it in an app's `mcp.py`, before the registries are frozen.
        """
        toolset = cls()
        for tool in toolset.tools.values():
            (registry or default_registry).add_tool(tool)
        return toolset

    # -- as a provider (the adapter endpoint): the same tools, filtered by each tool's scope

    def _reached(self, tool: Tool | None, ctx: Context) -> Tool | None:
        scope: Scope | None = ctx.scope
        return tool if tool is not None and scope is not None and tool.scope <= scope else None

    def permissions_of(self, item: Mapping[str, Any]) -> Sequence[str]:
        """A listed tool's permissions: the toolset's and the tool's own."""
        tool = self.tools.get(str(item.get("name", "")))
        return () if tool is None else tool.permissions

    async def list_tools(self, ctx: Context) -> list[dict[str, Any]]:
        return [tool.definition(verbose(ctx)) for tool in self.tools.values() if self._reached(tool, ctx)]

    async def get_tool(self, name: str, ctx: Context) -> dict[str, Any] | None:
        tool = self._reached(self.tools.get(name), ctx)
        return None if tool is None else tool.definition(verbose(ctx))

    async def call_tool(self, name: str, arguments: dict[str, Any], ctx: Context) -> dict[str, Any]:
        return await self.tools[name].call(arguments, ctx.request)
