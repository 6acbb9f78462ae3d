"""`APIToolset`: DRF viewsets and API views as tools, run through the view itself.

```python
class BookAPI(APIToolset):
    view = BookViewSet                      # a ViewSet, or an APIView
    actions = ["list", "retrieve", "create"]
```

Each call builds a real `HttpRequest` (a WSGI request with a JSON body and a query string) and hands
it to the view's `as_view()` handler, with the MCP caller forced as the request's user the way DRF's
own test client forces one (`_force_auth_user`, read by `rest_framework.request.Request`): the caller
was authenticated at admission, and the view's permissions, throttles, serializer validation and
exception handler all run as they do over HTTP. A response of status 400 or more is an `isError` result
carrying the view's messages. docs/toolsets.md.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, ClassVar, Final

import pydantic
from django.db import models

from mcp_django.context import Context
from mcp_django.declarations import Tool, ToolError
from mcp_django.declarations.django_values import serializer_schema
from mcp_django.runtime.results import describe_errors
from mcp_django.toolsets.base import Toolset, ToolsetTool, caller_request, http_status, parameter, tool_function
from mcp_django.toolsets.lookups import resolve_field, value_annotation
from mcp_django.toolsets.naming import model_nouns, pk_argument, tool_nouns
from mcp_django.toolsets.query import QueryArgument, query_arguments, routed_path
from mcp_django.toolsets.schemas import serializer_parameters

VIEWSET_ACTIONS: Final = {
    # action: (HTTP method, detail, tool name prefix, annotations)
    "list": ("get", False, "list", {"readOnlyHint": True}),
    "retrieve": ("get", True, "get", {"readOnlyHint": True}),
    "create": ("post", False, "create", {"readOnlyHint": False, "destructiveHint": False}),
    "update": ("put", True, "replace", {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True}),
    "partial_update": ("patch", True, "update", {"readOnlyHint": False, "destructiveHint": True}),
    "destroy": ("delete", True, "delete", {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True}),
}
"""The standard viewset actions: the HTTP method each answers, whether it needs the lookup, and its tool name."""

_METHODS: Final = ("get", "post", "put", "patch", "delete")
_BODY_METHODS: Final = frozenset({"post", "put", "patch"})


class _Route:
    """One tool's way into the view: the handler `as_view()` built, the HTTP method, the arguments' roles."""

    def __init__(self, handler: Callable[..., Any], method: str, lookup: str | None, argument: str = "") -> None:
        self.handler = handler
        self.method = method
        self.lookup = lookup  # the URL keyword argument the view takes
        self.argument = argument or lookup or ""  # the tool's argument that carries it
        self.query: dict[str, QueryArgument] = {}
        self.action = ""  # the viewset action (an API view's: its HTTP method)
        self.path: str | None = None  # the view's routed path, found on the first call (`routed_path`)
        self.structured = False


class APIToolset(Toolset):
    """A DRF viewset or API view as tools, each call run through the view with the MCP caller as `request.user`.

    Attributes:
        view: a `ViewSet` (`GenericViewSet`, `ModelViewSet`, ...) or an `APIView` class.
        actions: for a viewset, which of its actions to serve (`list`, `retrieve`, `create`, `update`,
            `partial_update`, `destroy` and its `@action`s; default: every one it has); for an API view,
            which HTTP methods (default: every one it defines).
        basename: the tool names' noun (default: as `ModelToolset`'s, from the queryset's model's
            untranslated verbose names, else from the class name); `plural` names the list tool
            (default: the model's plural, or `basename` + "s" when `basename` is set).
        url_kwargs: for an API view, the URL keyword arguments it takes and their types (`{"pk": int}`).
        server_name: the host the synthesized request names (what `build_absolute_uri()` uses in
            pagination links and hyperlinked fields); it must be in `ALLOWED_HOSTS`.
        remote_addr: the client address the request carries (what anonymous throttles key on).
    """

    view: ClassVar[type | None] = None
    actions: ClassVar[Sequence[str] | None] = None
    basename: ClassVar[str] = ""
    plural: ClassVar[str] = ""
    url_kwargs: ClassVar[Mapping[str, Any]] = {}
    server_name: ClassVar[str] = "localhost"
    remote_addr: ClassVar[str] = "127.0.0.1"

    def build_tools(self) -> list[Tool]:
        from rest_framework.views import APIView
        from rest_framework.viewsets import ViewSetMixin

        view, name = self.view, type(self).__name__
        if not (isinstance(view, type) and issubclass(view, APIView)):
            self.problem(
                "mcp_django.E118", f"{name}.view is not a DRF APIView or ViewSet.", "Set view to a view class."
            )
            return []
        self._routes: dict[str, _Route] = {}
        model = getattr(getattr(view, "queryset", None), "model", None)
        default = model_nouns(model) if model is not None else _class_nouns(view)
        self._basename, self._plural = tool_nouns(self.basename, self.plural, default)
        self._label = str(model._meta.verbose_name) if model is not None else self._basename.replace("_", " ")
        self._labels = str(model._meta.verbose_name_plural) if model is not None else f"{self._label}s"
        tools = self._viewset_tools(view, model) if issubclass(view, ViewSetMixin) else self._api_view_tools(view)
        return self.named(tools, "mcp_django.E119")

    # -- building

    def _viewset_tools(self, view: Any, model: type[models.Model] | None) -> list[Tool]:
        extra = {action.__name__: action for action in view.get_extra_actions()}
        available = [action for action in VIEWSET_ACTIONS if callable(getattr(view, action, None))] + list(extra)
        wanted = list(self.actions) if self.actions is not None else available
        tools = []
        for action in wanted:
            if action not in available:
                self.problem(
                    "mcp_django.E118",
                    f"{type(self).__name__}: {view.__name__} has no action {action!r}.",
                    f"Choose among {', '.join(available)}.",
                )
                continue
            tool_name = self._tool_name(action)
            try:
                tools.append(self._viewset_tool(view, model, action, extra, tool_name))
            except Exception as error:  # one tool's mistake leaves that tool out, and is a system check
                self.failed(error, tool_name)
        return tools

    def _tool_name(self, action: str) -> str:
        if action in VIEWSET_ACTIONS:
            return f"{VIEWSET_ACTIONS[action][2]}_{self._plural if action == 'list' else self._basename}"
        return f"{action}_{self._basename}"

    def _viewset_tool(
        self, view: Any, model: type[models.Model] | None, action: str, extra: Mapping[str, Any], tool_name: str
    ) -> Tool:
        lookup = view.lookup_url_kwarg or view.lookup_field
        if action in VIEWSET_ACTIONS:
            method, detail, _, annotations = VIEWSET_ACTIONS[action]
            serializer = getattr(view, "serializer_class", None)
            initkwargs: dict[str, Any] = {}
        else:
            function = extra[action]
            method, detail = next(iter(function.mapping)), function.detail
            annotations = {"readOnlyHint": method == "get"}
            initkwargs = function.kwargs
            serializer = initkwargs.get("serializer_class", getattr(view, "serializer_class", None))
        handler = view.as_view({method: action}, basename=self._basename, detail=detail, **initkwargs)
        route = _Route(handler, method, lookup if detail else None, pk_argument(model, lookup))
        description = _own_doc(getattr(view, action)) or self._description(action, route.argument)
        instance = view(action=action, detail=detail, basename=self._basename, **initkwargs)
        return self._tool(tool_name, description, route, instance, serializer, model, action, annotations)

    def _api_view_tools(self, view: Any) -> list[Tool]:
        available = [method for method in _METHODS if callable(getattr(view, method, None))]
        tools = []
        for method in self.actions if self.actions is not None else available:
            if method not in available:
                self.problem(
                    "mcp_django.E118",
                    f"{type(self).__name__}: {view.__name__} does not answer {method.upper()}.",
                    f"Choose among {', '.join(available)}.",
                )
                continue
            try:
                tools.append(self._api_view_tool(view, method))
            except Exception as error:  # one tool's mistake leaves that tool out, and is a system check
                self.failed(error, f"{method}_{self._basename}")
        return tools

    def _api_view_tool(self, view: Any, method: str) -> Tool:
        route = _Route(view.as_view(), method, None)
        description = _own_doc(getattr(view, method)) or _own_doc(view) or f"{method.upper()} {self._noun()}."
        serializer = getattr(view, "serializer_class", None)
        annotations = {"readOnlyHint": method == "get"}
        return self._tool(
            f"{method}_{self._basename}", description, route, view(), serializer, None, method, annotations
        )

    def _noun(self, plural: bool = False) -> str:
        return self._labels if plural else self._label

    def _description(self, action: str, lookup: str) -> str:
        return {
            "list": f"List {self._noun(plural=True)}.",
            "retrieve": f"Get one {self._noun()} by its {lookup}.",
            "create": f"Create a {self._noun()}.",
            "update": f"Replace a {self._noun()}: every field is set.",
            "partial_update": f"Change a {self._noun()}: only the fields given change.",
            "destroy": f"Delete a {self._noun()}.",
        }.get(action, f"{action.replace('_', ' ').capitalize()} ({self._noun()}).")

    def _tool(
        self,
        name: str,
        description: str,
        route: _Route,
        instance: Any,
        serializer: type | None,
        model: type[models.Model] | None,
        action: str,
        annotations: dict[str, bool],
    ) -> Tool:
        parameters: list[inspect.Parameter] = []
        if route.lookup is not None:
            lookup_type = _lookup_type(model, getattr(instance, "lookup_field", "pk"))
            described = pydantic.Field(description=f"The {self._noun()}'s {route.argument}.")
            parameters.append(parameter(route.argument, Annotated[lookup_type, described]))
        for kwarg, kwarg_type in self.url_kwargs.items():
            parameters.append(parameter(kwarg, kwarg_type))
        if route.method == "get" and action in ("list", "get"):
            route.query = {argument.name: argument for argument in query_arguments(instance)}
            parameters += [argument.parameter for argument in route.query.values()]
        elif route.method in _BODY_METHODS and serializer is not None:
            parameters += serializer_parameters(serializer, partial=route.method == "patch")
        returns: Any = Any
        # The serializer describes the response only where DRF's own code answers with its data (a
        # retrieve, create or update of its mixins); anything the project wrote may answer anything.
        drf_answers = _drf_own(getattr(type(instance), action, None))
        if serializer is not None and drf_answers and (route.method in _BODY_METHODS or route.lookup is not None):
            returns = serializer_schema(serializer)
            route.structured = True
        route.action = action
        self._routes[name] = route
        implementation = _call(self, name)
        return ToolsetTool(
            tool_function(implementation, name, parameters, returns),
            name=name,
            description=description,
            annotations={**annotations, "openWorldHint": False},
            scope=self.scope,
            timeout=self.timeout,
        )

    # -- serving (in the tool's thread)

    def _path(self, route: _Route) -> str | None:
        from rest_framework.viewsets import ViewSetMixin

        view = self.view
        assert isinstance(view, type)
        viewset = issubclass(view, ViewSetMixin)
        return routed_path(view, route.action, viewset=viewset) if not self.url_kwargs else None

    def request(
        self, ctx: Context, method: str, query: Mapping[str, Any], body: Mapping[str, Any] | None, path: str = "/"
    ) -> Any:
        """The `HttpRequest` a call sends to the view (`base.caller_request`), named after this toolset's host,
        at `path` (the view's own path where the URLconf routes it: pagination links are built from it)."""
        return caller_request(
            ctx, method, query, body, path=path, server_name=self.server_name, remote_addr=self.remote_addr
        )

    def dispatch(self, ctx: Context, tool_name: str, given: dict[str, Any]) -> Any:
        """Run one call through the view and return its data; raise `ToolError` with its messages on a 4xx/5xx."""
        route = self._routes[tool_name]
        url_kwargs = {key: given.pop(key) for key in self.url_kwargs if key in given}
        if route.lookup is not None:
            url_kwargs[route.lookup] = given.pop(route.argument)
        query = {key: route.query[key].encode(given.pop(key)) for key in list(given) if key in route.query}
        body = given if route.method in _BODY_METHODS else None
        if route.path is None:
            route.path = (route.lookup is None and self._path(route)) or "/"
        response = route.handler(self.request(ctx, route.method, query, body, route.path), **url_kwargs)
        data = getattr(response, "data", None)
        code = response.status_code
        status = http_status(code)
        if data is None and code >= 300:
            data = response.content.decode(errors="replace") if hasattr(response, "content") else ""
        if code >= 400:
            raise ToolError(f"{status}: {describe_errors(data) or 'no details'}")
        if data is None:
            return status
        plain = _plain(data)
        return plain if route.structured else json.dumps(plain, ensure_ascii=False)


def _call(toolset: APIToolset, tool_name: str) -> Callable[..., Any]:
    def call(ctx: Context, **given: Any) -> Any:
        return toolset.dispatch(ctx, tool_name, given)

    return call


def _plain(data: Any) -> Any:
    """DRF's response data as plain JSON values (dates, decimals, UUIDs as DRF renders them)."""
    from rest_framework.utils.encoders import JSONEncoder

    return json.loads(json.dumps(data, cls=JSONEncoder))


def _lookup_type(model: type[models.Model] | None, lookup_field: str) -> Any:
    if model is None:
        return int | str
    resolved = resolve_field(model, model._meta.pk.name if lookup_field == "pk" else lookup_field)
    return str if isinstance(resolved, str) else value_annotation(resolved[0])


def _drf_own(obj: Any) -> bool:
    """Whether `obj` (a view's method) is DRF's own code, not the project's."""
    return str(getattr(obj, "__module__", "")).startswith("rest_framework")


def _own_doc(obj: Any) -> str:
    """The first paragraph of a docstring the project wrote (DRF's own mixins' docstrings are too generic)."""
    if _drf_own(obj):
        return ""
    doc = inspect.getdoc(obj) or ""
    return doc.split("\n\n")[0].replace("\n", " ").strip()


def _class_nouns(view: type) -> tuple[str, str]:
    name = view.__name__
    for suffix in ("ViewSet", "APIView", "View"):
        name = name.removesuffix(suffix)
    noun = "".join(f"_{char.lower()}" if char.isupper() else char for char in name).lstrip("_") or "resource"
    return noun, f"{noun}s"
