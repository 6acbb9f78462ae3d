"""`AdminActionsToolset`: a registered `ModelAdmin`'s actions as tools, allowed and logged as the admin does.

```python
class BookAdminActions(AdminActionsToolset):
    model = Book                            # its ModelAdmin on `admin_site` (default: admin.site)
    max_objects = 50
```

One tool per action (`<basename>_<action>`): the caller selects objects with the admin's own search
(`search_fields`), its simple `list_filter` fields and primary keys, through the `ModelAdmin`'s
`get_changelist_instance()`; the action is offered only when the admin site lets the caller in and
`get_actions(request)` (which applies each action's `allowed_permissions`) keeps it. An action marked
destructive asks the user to confirm, listing the objects, before it runs. Each run writes the admin's
`LogEntry` history (`ModelAdmin.log_change` / `log_deletions`). docs/admin-actions.md.
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, ClassVar, Final

import pydantic
from django.contrib.auth import get_permission_codename
from django.core.exceptions import PermissionDenied
from django.db import models, transaction

from mcp_django.context import Context
from mcp_django.declarations import Tool, ToolError
from mcp_django.toolsets.base import Toolset, ToolsetTool, caller_request, parameter, tool_function
from mcp_django.toolsets.lookups import value_annotation

_STANDARD_PERMISSIONS: Final = ("add", "change", "delete", "view")
_CONFIRM: Final = {
    "type": "object",
    "properties": {"confirm": {"type": "boolean", "title": "Run it", "description": "Run the action on them."}},
    "required": ["confirm"],
}


class ActionRun(pydantic.BaseModel):
    """What an admin action tool did."""

    action: str
    ran: bool = pydantic.Field(description="False when the user declined to confirm: nothing changed.")
    objects: list[str] = pydantic.Field(
        description="The objects selected, as the admin names them after the action (one it deleted: as before)."
    )
    messages: list[str] = pydantic.Field(description="What the action told the user (`message_user`).")


class Changelist(pydantic.BaseModel):
    """A page of the admin's changelist: its rows with the `list_display` columns."""

    count: int = pydantic.Field(description="How many objects match, over all pages.")
    rows: list[dict[str, Any]] = pydantic.Field(
        description="`pk` and each `list_display` column, as the admin shows it."
    )


class _Messages:
    """Collects what an action sends with `message_user` (the `request._messages` Django's messages API writes to)."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def add(self, level: int, message: Any, extra_tags: str = "") -> None:
        self.texts.append(str(message))


class AdminActionsToolset(Toolset):
    """A `ModelAdmin`'s actions as tools, each run by the admin's own permission checks, selection and log.

    Attributes:
        model: the model whose `ModelAdmin` (registered on `admin_site`) is served.
        admin_site: the `AdminSite` (default: `django.contrib.admin.site`).
        include: the actions to serve, by name (default: every action of the `ModelAdmin`).
        exclude: actions to leave out.
        names: tool names by action name (default: `<basename>_<action>`).
        destructive: action names that ask for confirmation, beside `delete_selected` and any action
            function with `mcp_destructive = True`.
        max_objects: the most objects one call may act on; a larger selection is refused.
        changelist: also serve `<basename>_changelist`, the changelist as a read tool (its search,
            filters and `list_display` columns, at most `max_objects` rows a call).
        basename: the tool names' prefix (default: the model's name).
    """

    model: ClassVar[type[models.Model] | None] = None
    admin_site: ClassVar[Any] = None
    include: ClassVar[Sequence[str] | None] = None
    exclude: ClassVar[Sequence[str]] = ()
    names: ClassVar[Mapping[str, str]] = {}
    destructive: ClassVar[Sequence[str]] = ()
    max_objects: ClassVar[int] = 100
    changelist: ClassVar[bool] = False
    basename: ClassVar[str] = ""

    # -- what a subclass may override

    def is_destructive(self, name: str, function: Callable[..., Any]) -> bool:
        """Whether an action asks for confirmation before it runs."""
        return (
            name == "delete_selected" or name in self.destructive or bool(getattr(function, "mcp_destructive", False))
        )

    # -- building

    def build_tools(self) -> list[Tool]:
        from django.contrib import admin

        name = type(self).__name__
        site = self.admin_site or admin.site
        if not (
            isinstance(self.model, type) and issubclass(self.model, models.Model) and site.is_registered(self.model)
        ):
            self.problem(
                "mcp_django.E224",
                f"{name}.model is not a model registered with the admin site.",
                "Register its ModelAdmin first (django.contrib.admin before mcp_django).",
            )
            return []
        self._admin = site.get_model_admin(self.model)
        if self.max_objects < 1:
            self.problem("mcp_django.E226", f"{name}.max_objects must be at least 1.", "Set max_objects to 1 or more.")
            return []
        actions: dict[str, tuple[Callable[..., Any], str]] = {}
        if self._admin.actions is not None:  # None: actions switched off, as on the changelist
            for wanted in [site_name for site_name, _ in site.actions] + list(self._admin.actions):
                found = self._admin.get_action(wanted)
                if found is not None:
                    function, action, description = _parts(found)
                    actions.setdefault(action, (function, description))
        for option in ("include", "exclude", "names", "destructive"):
            unknown = [item for item in getattr(self, option) or () if item not in actions]
            if unknown:
                self.problem(
                    "mcp_django.E225",
                    f"{name}.{option}: {type(self._admin).__name__} has no action {unknown[0]!r}.",
                    f"Choose among {', '.join(actions) or 'no actions'}.",
                )
        self._actions = {action: function for action, (function, _) in actions.items()}
        self._basename = self.basename or self.model._meta.model_name
        self._filters = self._simple_filters()
        tools = [
            self._tool(action, function, description)
            for action, (function, description) in actions.items()
            if (self.include is None or action in self.include) and action not in self.exclude
        ]
        if self.changelist:
            tools.append(self._changelist_tool())
        return self.named(tools, "mcp_django.E227", "Set basename or names to letters, digits and _.")

    def _simple_filters(self) -> dict[str, models.Field[Any, Any]]:
        """The `list_filter` entries that name a field of the model itself: each an argument (`<field>__exact`)."""
        assert self.model is not None
        fields: dict[str, models.Field[Any, Any]] = {}
        for item in self._admin.list_filter:
            if isinstance(item, str) and "__" not in item:
                try:
                    field = self.model._meta.get_field(item)
                except LookupError:
                    continue
                if isinstance(field, models.Field) and field.concrete and not field.many_to_many:
                    fields[item] = field
        return fields

    def _selection(self) -> list[inspect.Parameter]:
        """The arguments that select objects as the changelist does: ids, the search, the simple filters."""
        assert self.model is not None
        opts = self.model._meta
        pk = value_annotation(opts.pk)
        parameters = [
            parameter(
                "ids",
                Annotated[list[pk], pydantic.Field(description=f"The {opts.verbose_name_plural}' primary keys.")],  # type: ignore[valid-type]  # built at run time
                None,
            )
        ]
        if self._admin.search_fields:
            searched = ", ".join(str(field).lstrip("^=@") for field in self._admin.search_fields)
            described = pydantic.Field(description=f"The admin's search, over {searched}.")
            parameters.append(parameter("search", Annotated[str, described], None))
        for key, field in self._filters.items():
            described = pydantic.Field(description=f"Only those whose {field.verbose_name} is this.")
            parameters.append(parameter(key, Annotated[value_annotation(field), described], None))
        return parameters

    def _tool(self, action: str, function: Callable[..., Any], description: str) -> Tool:
        assert self.model is not None
        opts = self.model._meta
        parameters = self._selection()
        tool_name = self.names.get(action) or f"{self._basename}_{action}"
        destructive = self.is_destructive(action, function)
        text = f"{description} (the admin's action on {opts.verbose_name_plural})."
        if destructive:
            text += " Asks the user to confirm first."
        text += f" Select them by ids, search or filters; at most {self.max_objects}."
        return ToolsetTool(
            tool_function(_run(self, action), tool_name, parameters, ActionRun),
            name=tool_name,
            description=text,
            annotations={"readOnlyHint": False, "destructiveHint": destructive, "openWorldHint": False},
            scope=self.scope,
            timeout=self.timeout,
        )

    def _changelist_tool(self) -> Tool:
        assert self.model is not None
        opts = self.model._meta
        limit = pydantic.Field(ge=1, le=self.max_objects, description=f"How many rows (at most {self.max_objects}).")
        parameters = [*self._selection(), parameter("limit", Annotated[int, limit], min(20, self.max_objects))]
        name = self.names.get("changelist") or f"{self._basename}_changelist"
        return ToolsetTool(
            tool_function(self.list_rows, name, parameters, Changelist),
            name=name,
            description=f"The admin's list of {opts.verbose_name_plural}: search, filter, read its columns.",
            annotations={"readOnlyHint": True, "openWorldHint": False},
            scope=self.scope,
            timeout=self.timeout,
        )

    # -- serving (in the tool's thread)

    def list_rows(self, ctx: Context, **given: Any) -> dict[str, Any]:
        """The changelist's first rows for a selection, as the caller may see it in the admin."""
        from django.contrib.admin.utils import lookup_field

        request = self._request(ctx, "GET", self._query(given), None)
        self._admit(request)
        queryset = self._selected(request, given.get("ids"))
        columns = [name for name in self._admin.get_list_display(request) if name != "action_checkbox"]
        rows = []
        for obj in queryset[: given.get("limit", min(20, self.max_objects))]:
            row: dict[str, Any] = {"pk": obj.pk}
            for column in columns:
                value = lookup_field(column, obj, self._admin)[2]
                key = "object" if column == "__str__" else str(getattr(column, "__name__", column))
                row[key] = value if isinstance(value, (str, int, float, bool, type(None))) else str(value)
            rows.append(row)
        return {"count": queryset.count(), "rows": rows}

    def run(self, ctx: Context, action: str, given: dict[str, Any]) -> dict[str, Any]:
        """Select the objects as the changelist does, check the admin's permissions, confirm, run and log."""
        from django.contrib.admin import helpers

        assert self.model is not None
        noun = str(self.model._meta.verbose_name_plural)
        ids = given.get("ids")
        if not given:
            raise ToolError("Select the objects: give ids, search or a filter.")
        form = {"action": action, helpers.ACTION_CHECKBOX_NAME: ids or [], "index": 0, "post": "yes"}
        request = self._request(ctx, "POST", self._query(given), form)
        self._admit(request)
        offered = self._admin.get_actions(request)
        if action not in offered:
            raise ToolError(f"Permission denied: {self._needs(action)}")
        function, _, description = _parts(offered[action])
        queryset = self._selected(request, ids)
        count = queryset.count()
        if count > self.max_objects:
            raise ToolError(f"The selection has {count} {noun}, more than {self.max_objects}: narrow it.")
        objects = list(queryset[: self.max_objects])
        missing = [value for value in ids or () if value not in {obj.pk for obj in objects}]
        if missing:
            raise ToolError(f"No {self.model._meta.verbose_name} with primary key {missing[0]!r} in the selection.")
        if not objects:
            raise ToolError(f"No {noun} match the selection.")
        shown = [str(obj) for obj in objects]
        result = {"action": action, "ran": False, "objects": shown, "messages": []}
        if self.is_destructive(action, function) and not self._confirmed(ctx, action, description, objects):
            result["messages"] = ["Not run: the user did not confirm. Nothing changed."]
            return result
        messages = _Messages()
        request._messages = messages
        selected = self._admin.get_queryset(request).filter(pk__in=[obj.pk for obj in objects])
        with transaction.atomic():  # the action and its history rows together
            try:
                response: Any = function(self._admin, request, selected)
            except PermissionDenied as exc:
                raise ToolError(f"Permission denied: {exc or self._needs(action)}") from exc
            if response is not None and not 300 <= response.status_code < 400:
                raise ToolError(_page(response))
            after = self._reread(objects)
            self._log(request, action, description, objects, after)
        named = [str(after.get(obj.pk, obj)) for obj in objects]  # a deleted object: as it was named before
        return result | {"ran": True, "objects": named, "messages": messages.texts}

    def _query(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """The changelist's query string for a selection: `q` for the search, `<field>__exact` per filter."""
        from django.contrib.admin.views.main import SEARCH_VAR

        query: dict[str, Any] = {SEARCH_VAR: given["search"]} if "search" in given else {}
        return query | {f"{key}__exact": _filter_value(given[key]) for key in self._filters if key in given}

    def _request(self, ctx: Context, method: str, query: Mapping[str, Any], form: Mapping[str, Any] | None) -> Any:
        """A request to the changelist (`post=yes` in an action's form: the elicitation was its confirmation)."""
        assert self.model is not None
        opts = self.model._meta
        path = f"/admin/{opts.app_label}/{opts.model_name}/"
        return caller_request(ctx, method, query, path=path, form=form)

    def _admit(self, request: Any) -> None:
        """Refuse a caller the admin site or the changelist would refuse."""
        assert self.model is not None
        if not self._admin.admin_site.has_permission(request):
            raise ToolError("Permission denied: the admin site lets in active staff users only.")
        if not self._admin.has_view_or_change_permission(request):
            raise ToolError(f"Permission denied: you may not see {self.model._meta.verbose_name_plural} in the admin.")

    def _selected(self, request: Any, ids: Sequence[Any] | None) -> models.QuerySet[Any]:
        """The changelist's rows for the request's search and filters, among `ids` when given."""
        from django.contrib.admin.options import IncorrectLookupParameters

        try:
            queryset = self._admin.get_changelist_instance(request).get_queryset(request)
        except IncorrectLookupParameters as exc:
            raise ToolError(f"Invalid selection: {exc or 'a filter value the admin refuses'}.") from exc
        return queryset if ids is None else queryset.filter(pk__in=ids)

    def _needs(self, action: str) -> str:
        assert self.model is not None
        opts = self.model._meta
        needed = [
            f"{opts.app_label}.{get_permission_codename(name, opts)}" if name in _STANDARD_PERMISSIONS else name
            for name in getattr(self._actions[action], "allowed_permissions", ())
        ]
        why = f" (it needs {', '.join(needed)})" if needed else ""
        return f"the admin does not offer you the action {action!r}{why}."

    def _confirmed(self, ctx: Context, action: str, description: str, objects: list[models.Model]) -> bool:
        """Whether the user confirms running the action on exactly these objects.

        The question's key names the action and the objects: where the answer comes back in a later
        round (the 2026 era reruns the call with it), a selection that changed meanwhile is asked again.
        """
        listing = "\n".join(f"- {obj}" for obj in objects)
        count = len(objects)
        question = f"{description}: {count} object{'s' if count != 1 else ''}.\n{listing}\nRun it?"
        selection = hashlib.sha256(repr((action, [obj.pk for obj in objects])).encode()).hexdigest()[:16]
        answer = ctx.elicit_sync(question, _CONFIRM, key=f"confirm-{selection}")
        return bool(answer.get("action") == "accept" and (answer.get("content") or {}).get("confirm") is True)

    def _reread(self, objects: list[models.Model]) -> dict[Any, models.Model]:
        """The objects as the action left them, by primary key (those it deleted are absent)."""
        assert self.model is not None
        return self.model._default_manager.in_bulk([obj.pk for obj in objects])

    def _log(
        self,
        request: Any,
        action: str,
        description: str,
        objects: list[models.Model],
        after: Mapping[Any, models.Model],
    ) -> None:
        """Write each object's `LogEntry`: a change for those still there (as they are now), a deletion for those gone.

        Django's own `delete_selected` logs its deletions itself (`log_deletions`), before deleting.
        """
        message = f'Ran the admin action "{description}" through MCP.'
        for obj in objects:
            if obj.pk in after:
                self._admin.log_change(request, after[obj.pk], message)
        gone = [obj for obj in objects if obj.pk not in after]
        if gone and action != "delete_selected":
            self._admin.log_deletions(request, gone)  # type: ignore[arg-type]  # iterated; the rows are gone


def _run(toolset: AdminActionsToolset, action: str) -> Callable[..., Any]:
    def call(ctx: Context, **given: Any) -> Any:
        return toolset.run(ctx, action, given)

    return call


def _parts(action: Any) -> tuple[Callable[..., Any], str, str]:
    """An action's function, name and description: an `Action` on Django 6.1 (whose tuple form is
    deprecated), a `(function, name, description)` tuple before."""
    if hasattr(action, "func"):
        return action.func, str(action.name), str(action.description)
    function, name, description = action
    return function, str(name), str(description)


def _filter_value(value: Any) -> Any:
    """A filter argument as the changelist's query string spells it (a boolean field reads 1 or 0)."""
    return ("1" if value else "0") if isinstance(value, bool) else value


def _page(response: Any) -> str:
    """Why an action's own response cannot be a tool result."""
    context = getattr(response, "context_data", None) or {}
    if context.get("protected"):
        return f"Refused: protected related objects would be deleted: {', '.join(map(str, context['protected']))}."
    if context.get("perms_lacking"):
        return f"Permission denied: deleting also needs permission on {', '.join(map(str, context['perms_lacking']))}."
    return f"The action answered with a page of its own (status {response.status_code}), which a tool cannot show."
