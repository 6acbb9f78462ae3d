"""`NinjaToolset`: the operations of a django-ninja `NinjaAPI` or `Router` as tools, run through Ninja.

```python
class BookNinjaTools(NinjaToolset):
    api = books_api                        # a NinjaAPI, or a Router
    exclude = ["delete_book"]
```

The toolset reads the API's own OpenAPI document (`NinjaAPI.get_openapi_schema()`): each operation's
parameters and body are the JSON schemas Ninja made from their pydantic models, and become the tool's
input schema as they are. A call builds a real `HttpRequest` for the caller (`base.caller_request`),
resolves it through the API's URL patterns (`NinjaAPI.urls`) and calls the view Django would call, so
Ninja's authentication, throttles, validation, exception handlers and response schemas all run as
they do over HTTP. A response of status 400 or more is an `isError` result with Ninja's `detail`.
docs/ninja.md.
"""

from __future__ import annotations

import copy
import inspect
import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, ClassVar, Final
from urllib.parse import quote

from django.urls import URLResolver
from django.urls.exceptions import Resolver404
from django.urls.resolvers import RegexPattern

from mcp_django.context import Context
from mcp_django.declarations import Tool, ToolError
from mcp_django.scopes import Scope
from mcp_django.toolsets.base import Toolset, caller_request, http_status, method_annotations

SUPPORTED_NINJA: Final = ">=1.7,<2"
"""The django-ninja versions the toolset is tested with (the `ninja` extra's range)."""

_METHODS: Final = ("get", "post", "put", "patch", "delete")
_REF = re.compile(r"^#/components/schemas/(.+)$")


class _OperationTool(Tool):
    """An operation's tool: its schemas are given verbatim, but generated (from the OpenAPI document), so the
    lean form trims them as it trims a declaration's."""

    lean_verbatim = True


class _Operation:
    """One tool's way into the API: its method and path, and which arguments go where."""

    def __init__(self, operation_id: str, method: str, path: str) -> None:
        self.operation_id = operation_id
        self.method = method
        self.path = path
        self.path_names: list[str] = []
        self.query_names: list[str] = []
        self.body_names: list[str] | None = None  # the body's fields, given as arguments of their own
        self.body_argument = False  # the whole body as one `body` argument
        self.structured = False


class NinjaToolset(Toolset):
    """A django-ninja API's operations as tools, each call run through Ninja with the MCP caller as `request.user`.

    Attributes:
        api: a `ninja.NinjaAPI`, or a `ninja.Router` (served through an API of the toolset's own).
        include: the operations to serve, by operation id or tool name (default: every one in the
            API's OpenAPI document).
        exclude: operations to leave out, by operation id or tool name.
        names: tool names by operation id (default: the view function's name, see `tool_name`).
        write_scope: the least scope that sees the tools of operations other than GET (default: `scope`).
        max_response_bytes: the largest response body a call returns; a larger one is an error result.
        server_name: the host the synthesized request names (it must be in `ALLOWED_HOSTS` where the
            API builds absolute URLs).
        remote_addr: the client address the request carries (what Ninja's anonymous throttles key on).
    """

    api: ClassVar[Any] = None
    include: ClassVar[Sequence[str] | None] = None
    exclude: ClassVar[Sequence[str]] = ()
    names: ClassVar[Mapping[str, str]] = {}
    write_scope: ClassVar[Scope | None] = None
    max_response_bytes: ClassVar[int] = 1_000_000
    server_name: ClassVar[str] = "localhost"
    remote_addr: ClassVar[str] = "127.0.0.1"

    # -- what a subclass may override

    def tool_name(self, operation_id: str, details: Mapping[str, Any], function_names: Sequence[str]) -> str:
        """The name of an operation's tool (`names` first).

        Ninja's default operation id is the view's module and name (`shop_api_list_books`): the tool is
        then named after the function alone (`list_books`); an operation id set by hand is the name.
        """
        if operation_id in self.names:
            return self.names[operation_id]
        for function in sorted(function_names, key=len, reverse=True):  # `list_books` before `books`
            if operation_id.endswith(f"_{function}"):
                return function
        return operation_id

    def request(self, ctx: Context, method: str, path: str, query: Mapping[str, Any], body: Any) -> Any:
        """The `HttpRequest` a call sends to the API (`base.caller_request`): override to add headers."""
        return caller_request(
            ctx, method, query, body, path=path, server_name=self.server_name, remote_addr=self.remote_addr
        )

    # -- building

    def build_tools(self) -> list[Tool]:
        from ninja import NinjaAPI, Router

        name = type(self).__name__
        if isinstance(self.api, Router):
            api = NinjaAPI(urls_namespace=f"mcp-django-{id(self)}")
            api.add_router("", self.api)
        elif isinstance(self.api, NinjaAPI):
            api = self.api
        else:
            self.problem("mcp_django.E220", f"{name}.api is not a NinjaAPI or a Router.", "Set api to one of them.")
            return []
        patterns = api.urls[0]
        self._resolver = URLResolver(RegexPattern(r"^/"), patterns)
        document = api.get_openapi_schema(path_prefix="")
        self._components: dict[str, Any] = document.get("components", {}).get("schemas", {})
        functions = _function_names(patterns)
        self._operations: dict[str, _Operation] = {}
        tools: list[Tool] = []
        known: set[str] = set()
        for path, methods in document.get("paths", {}).items():
            for method, details in methods.items():
                if method not in _METHODS:
                    continue
                operation_id = str(details.get("operationId", f"{method}_{path}"))
                tool_name = self.tool_name(operation_id, details, functions.get(_route_key(path), ()))
                known |= {operation_id, tool_name}
                if self.include is not None and not {operation_id, tool_name} & set(self.include):
                    continue
                if {operation_id, tool_name} & set(self.exclude):
                    continue
                tool = self._tool(tool_name, _Operation(operation_id, method, path), details)
                if tool is not None:
                    tools.append(tool)
        for option in ("include", "exclude", "names"):
            unknown = [item for item in getattr(self, option) or () if item not in known]
            if unknown:
                self.problem(
                    "mcp_django.E221",
                    f"{name}.{option}: the API has no operation {unknown[0]!r}.",
                    "Name an operation id or a tool name of the API.",
                )
        return self.named(tools, "mcp_django.E222", "Set names = {operation_id: name} to letters, digits and _.")

    def _tool(self, name: str, route: _Operation, details: Mapping[str, Any]) -> Tool | None:
        properties: dict[str, Any] = {}
        required: list[str] = []
        for item in details.get("parameters", ()):
            where, key = item.get("in"), str(item.get("name", ""))
            if where not in ("path", "query"):
                if item.get("required"):
                    self._unservable(name, f"needs the {where} parameter {key!r}")
                    return None
                continue
            schema = dict(item.get("schema", {}))
            if item.get("description") and "description" not in schema:
                schema["description"] = item["description"]
            properties[key] = schema
            if item.get("required") or where == "path":
                required.append(key)
            (route.path_names if where == "path" else route.query_names).append(key)
        body = details.get("requestBody")
        if body is not None:
            json_body = body.get("content", {}).get("application/json")
            if json_body is None:
                self._unservable(name, "takes a form or file body")
                return None
            body_schema = self._resolve(json_body.get("schema", {}))
            fields = body_schema.get("properties")
            if body_schema.get("type") == "object" and fields and not set(fields) & set(properties):
                route.body_names = list(fields)
                properties.update(fields)
                required += [key for key in body_schema.get("required", ()) if key not in required]
            else:
                route.body_argument = True
                properties["body"] = json_body.get("schema", {})
                if body.get("required"):
                    required.append("body")
        input_schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
        if required:
            input_schema["required"] = required
        output_schema = self._output_schema(details)
        route.structured = output_schema is not None
        self._operations[name] = route
        scope = self.scope if route.method == "get" else (self.write_scope or self.scope)
        description = details.get("description") or details.get("summary") or f"{route.method.upper()} {route.path}"
        return _OperationTool(
            _call(self, name),
            name=name,
            description=str(description),
            annotations=method_annotations(route.method),
            input_schema=self._with_definitions(input_schema),
            output_schema=None if output_schema is None else self._with_definitions(output_schema),
            scope=scope,
            timeout=self.timeout,
        )

    def _unservable(self, name: str, why: str) -> None:
        self.problem(
            "mcp_django.E223",
            f"{type(self).__name__}: operation {name!r} {why}.",
            "Exclude it, or give it path, query and JSON body parameters only.",
        )

    def _output_schema(self, details: Mapping[str, Any]) -> dict[str, Any] | None:
        """The success response's schema when it is an object (structured content must be one)."""
        responses = details.get("responses", {})
        codes = sorted(code for code in responses if str(code).isdigit() and 200 <= int(code) < 300)
        success = responses[codes[0]] if len(codes) == 1 else {}
        schema = success.get("content", {}).get("application/json", {}).get("schema")
        if not schema or self._resolve(schema).get("type") != "object":
            return None
        return dict(self._resolve(schema))

    def _resolve(self, schema: Mapping[str, Any]) -> Mapping[str, Any]:
        found = _REF.match(str(schema.get("$ref", "")))
        return self._components.get(found.group(1), {}) if found else schema

    def _with_definitions(self, schema: dict[str, Any]) -> dict[str, Any]:
        """`schema` with its references to the OpenAPI components rewritten to `$defs` it carries."""
        schema = copy.deepcopy(schema)
        definitions: dict[str, Any] = {}
        pending = list(_references(schema))
        while pending:
            name = pending.pop()
            if name in definitions or name not in self._components:
                continue
            definitions[name] = copy.deepcopy(self._components[name])
            pending += _references(definitions[name])
        _rewrite(schema)
        for definition in definitions.values():
            _rewrite(definition)
        if definitions:
            schema["$defs"] = definitions
        return schema

    # -- serving (in the tool's thread)

    def dispatch(self, ctx: Context, tool_name: str, given: dict[str, Any]) -> Any:
        """Run one call through the API's view and return its data; a 4xx/5xx raises `ToolError` with Ninja's detail."""
        route = self._operations[tool_name]
        path = route.path
        for key in route.path_names:
            path = path.replace(f"{{{key}}}", quote(str(given.pop(key)), safe=""))
        query = {key: given.pop(key) for key in route.query_names if key in given}
        body: Any = None
        if route.body_argument:
            body = given.pop("body", None)
        elif route.body_names is not None:
            body = {key: given.pop(key) for key in route.body_names if key in given}
        request = self.request(ctx, route.method, path, query, body)
        try:
            match = self._resolver.resolve(path)
        except Resolver404 as exc:  # a path parameter that the route's converter refuses (`int`)
            raise ToolError(f"404 Not Found: no operation answers {path}") from exc
        request.resolver_match = match
        response = match.func(request, *match.args, **match.kwargs)
        if inspect.isawaitable(response):  # an async operation: the tool's thread runs it to the end
            from asgiref.sync import async_to_sync

            response = async_to_sync(_awaited)(response)
        return self._result(route, response)

    def _result(self, route: _Operation, response: Any) -> Any:
        code = response.status_code
        content: bytes = b"".join(response) if getattr(response, "streaming", False) else response.content
        if len(content) > self.max_response_bytes:
            raise ToolError(
                f"The response is {len(content)} bytes, more than this toolset returns ({self.max_response_bytes})."
            )
        is_json = "json" in response.get("Content-Type", "")
        data = json.loads(content) if is_json and content else None
        if code >= 400:
            detail = _detail(data, route) if data is not None else content.decode(errors="replace")
            raise ToolError(f"{http_status(code)}: {detail or 'no details'}")
        if not content:
            return http_status(code)
        if not is_json:
            return content.decode(errors="replace")
        if route.structured:
            return data
        text = json.dumps(data, ensure_ascii=False)
        result: dict[str, Any] = {"content": [{"type": "text", "text": text}]}
        if isinstance(data, dict):
            result["structuredContent"] = data
        from mcp_django.content import ToolResult

        return ToolResult(result)


def _call(toolset: NinjaToolset, tool_name: str) -> Callable[..., Any]:
    def call(ctx: Context, **given: Any) -> Any:
        return toolset.dispatch(ctx, tool_name, given)

    call.__name__ = call.__qualname__ = tool_name
    return call


async def _awaited(awaitable: Any) -> Any:
    return await awaitable


def _detail(data: Any, route: _Operation) -> str:
    """Ninja's error body as one line: `detail` as is, or each validation error as `field: message`."""
    detail = data.get("detail", data) if isinstance(data, dict) else data
    if not isinstance(detail, list):
        return str(detail) if not isinstance(detail, dict) else json.dumps(detail, ensure_ascii=False)
    parts = []
    for error in detail:
        if not isinstance(error, dict):
            parts.append(str(error))
            continue
        location = [str(part) for part in error.get("loc", ())]
        if location[:1] == ["body"] and len(location) > 2 and not route.body_argument:
            location = location[2:]  # ("body", <the body parameter>, field...): the argument is the field
        else:
            location = location[1:]
        field = ".".join(location)
        parts.append(f"{field}: {error.get('msg', '')}" if field else str(error.get("msg", "")))
    return "; ".join(parts)


def _function_names(patterns: Sequence[Any]) -> dict[str, list[str]]:
    """The URL names (Ninja's default: the view function's name) of each route, keyed like `_route_key`."""
    names: dict[str, list[str]] = {}
    for pattern in patterns:
        if getattr(pattern, "name", None):
            names.setdefault(_route_key("/" + str(pattern.pattern)), []).append(pattern.name)
    return names


def _route_key(path: str) -> str:
    """A route without its parameters' names and converters: `/books/{id}` and `/books/<int:id>` alike."""
    return re.sub(r"\{[^}]*\}|<[^>]*>", "{}", path).rstrip("/")


def _references(schema: Any) -> Iterator[str]:
    if isinstance(schema, dict):
        found = _REF.match(str(schema.get("$ref", "")))
        if found:
            yield found.group(1)
        for value in schema.values():
            yield from _references(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from _references(value)


def _rewrite(schema: Any) -> None:
    if isinstance(schema, dict):
        found = _REF.match(str(schema.get("$ref", "")))
        if found:
            schema["$ref"] = f"#/$defs/{found.group(1)}"
        for value in schema.values():
            _rewrite(value)
    elif isinstance(schema, list):
        for value in schema:
            _rewrite(value)
