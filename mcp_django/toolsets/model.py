"""`ModelToolset`: a Django model as tools, declared in a few lines.

```python
class BookToolset(ModelToolset):
    model = Book
    fields = ["id", "title", "author", "year"]
    filters = {"title": ["icontains"], "author": ["exact", "icontains"], "year": ["gte", "lte"]}
    ordering = ["title", "year"]
```

serves `list_books` (filters, ordering, pagination, at most `max_rows` rows a call) and `get_book`;
`actions = [..., "create", "update", "delete"]` adds the writing tools. Every call checks the caller's
Django model permission (`view_`/`add_`/`change_`/`delete_`) in the tool's thread, and reads rows
only through `get_queryset(ctx)`. docs/toolsets.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any, ClassVar, Final

import pydantic
from django.contrib.auth import get_permission_codename
from django.db import models, transaction
from django.forms import ModelForm, modelform_factory
from django.forms.models import model_to_dict

from mcp_django.context import Context
from mcp_django.declarations import Tool, ToolError
from mcp_django.declarations.django_values import instance_fields, model_schema, serializer_schema
from mcp_django.runtime.results import describe_errors
from mcp_django.safety.approvals import Preview, cascade
from mcp_django.scopes import Scope
from mcp_django.toolsets.base import Toolset, ToolsetTool, caller, caller_request, parameter, tool_function
from mcp_django.toolsets.lookups import (
    Filter,
    ordering_annotation,
    resolve_field,
    resolve_filters,
    resolve_ordering,
    value_annotation,
)
from mcp_django.toolsets.naming import model_nouns, tool_nouns
from mcp_django.toolsets.schemas import (
    model_parameters,
    serializer_parameters,
    writable_fields,
)

MAX_OFFSET: Final = 2**31 - 1
"""The largest `offset` a list tool takes: the largest integer every database accepts in LIMIT/OFFSET."""

ACTIONS: Final = ("list", "get", "create", "update", "delete")
"""The tools a model toolset can serve; `list` and `get` by default, the writing ones only when named."""

_PERMISSIONS: Final = {"list": "view", "get": "view", "create": "add", "update": "change", "delete": "delete"}
_ANNOTATIONS: Final[dict[str, dict[str, bool]]] = {
    "list": {"readOnlyHint": True, "openWorldHint": False},
    "get": {"readOnlyHint": True, "openWorldHint": False},
    "create": {"readOnlyHint": False, "destructiveHint": False, "openWorldHint": False},
    "update": {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True, "openWorldHint": False},
    "delete": {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True, "openWorldHint": False},
}


class ModelToolset(Toolset):
    """A model as tools: `list_<plural>` and `get_<name>`, and `create_`/`update_`/`delete_<name>` when asked for.

    Attributes:
        model: the Django model.
        fields: the fields a row shows (`"__all__"` for every concrete field); required unless
            `serializer_class` is set. Writing tools write the editable ones among them.
        serializer_class: a DRF serializer that shows rows (its output schema is the row's) and
            validates writes (its writable fields are the arguments), instead of `fields`.
        filters: the allow-list of filters: `{path: [lookup, ...]}`, a path being a field or a
            relation's field (`"author__name"`), a lookup one of `lookups.SUPPORTED_LOOKUPS`.
            Each pair is one argument of the list tool (`title__icontains`; `exact` is the path).
        ordering: the paths a caller may order by (each also descending).
        default_ordering: the order without `order_by` (default: the model's `Meta.ordering`);
            the primary key always breaks ties, so pages are stable.
        actions: which of `ACTIONS` to serve.
        page_size: rows a list returns when the caller gives no `limit`.
        max_rows: the most rows one list call returns (the `limit` argument's maximum).
        scope: the least scope that sees the toolset (and its reading tools).
        write_scope: the least scope that sees the writing tools (default: `scope`).
        check_permissions: check the caller's Django model permission on every call (default True):
            `view_` (or `change_`, as the admin does) to read, `add_`, `change_`, `delete_` to write.
        basename: the tool names' noun (default: the model's untranslated `verbose_name`, `book`);
            `plural` for the list tool (default: its untranslated `verbose_name_plural`, `books`;
            `basename` + "s" when `basename` is set). `naming` has the rule.
        lookup_field: the field `get`/`update`/`delete` find a row by (default: the primary key).
    """

    model: ClassVar[type[models.Model] | None] = None
    fields: ClassVar[Sequence[str] | str] = ()
    serializer_class: ClassVar[type | None] = None
    filters: ClassVar[Mapping[str, Sequence[str]]] = {}
    ordering: ClassVar[Sequence[str]] = ()
    default_ordering: ClassVar[Sequence[str]] = ()
    actions: ClassVar[Sequence[str]] = ("list", "get")
    page_size: ClassVar[int] = 20
    max_rows: ClassVar[int] = 100
    write_scope: ClassVar[Scope | None] = None
    check_permissions: ClassVar[bool] = True
    basename: ClassVar[str] = ""
    plural: ClassVar[str] = ""
    lookup_field: ClassVar[str] = ""

    # -- what a subclass may override

    def get_queryset(self, ctx: Context) -> models.QuerySet[Any]:
        """The rows the caller may reach (default: all of the model's default manager). Runs in the tool's thread."""
        assert self.model is not None
        return self.model._default_manager.all()

    def has_permission(self, action: str, ctx: Context) -> bool:
        """Whether the caller may run `action` (default: the Django model permission it needs, see the class doc)."""
        if not self.check_permissions:
            return True
        user = caller(ctx)  # its permissions read afresh for this call
        return any(user.has_perm(name) for name in self._permission_names(action))

    def serializer_context(self, ctx: Context) -> dict[str, Any]:
        """The context `serializer_class` is given: a DRF `request` whose user is the caller (for
        `CurrentUserDefault` and `self.context["request"].user`), and the call's `mcp_context`."""
        from rest_framework.request import Request

        return {"request": Request(caller_request(ctx)), "mcp_context": ctx}

    # -- building

    def build_tools(self) -> list[Tool]:
        model = self.model
        if not (isinstance(model, type) and issubclass(model, models.Model)):
            self.problem(
                "mcp_django.E110",
                f"{type(self).__name__}.model is not a Django model.",
                "Set model to a model class, e.g. model = Book.",
            )
            return []
        opts = model._meta
        self._basename, self._plural = tool_nouns(self.basename, self.plural, model_nouns(model))
        if not self._resolve_rows(model):
            return []
        filters, filter_problems = resolve_filters(model, self.filters)
        for kind, message in filter_problems:
            check_id, hint = (
                ("mcp_django.E113", "Name a field of the model, or a relation's field with __.")
                if kind == "field"
                else (
                    "mcp_django.E114",
                    "Use exact, iexact, (i)contains, (i)startswith, (i)endswith, gt(e), lt(e), in or isnull.",
                )
            )
            self.problem(check_id, f"{type(self).__name__}: {message}.", hint)
        self._filters = filters
        order_paths, order_problems = resolve_ordering(model, self.ordering)
        for message in order_problems:
            self.problem("mcp_django.E115", f"{type(self).__name__}: {message}.", "Name a field of the model.")
        self._order_paths = order_paths
        self._lookup = self.lookup_field or opts.pk.name
        lookup_field = resolve_field(model, self._lookup)
        unknown = [action for action in self.actions if action not in ACTIONS]
        if unknown or isinstance(lookup_field, str):
            self.problem(
                "mcp_django.E116",
                f"{type(self).__name__}: unknown action {unknown[0]!r}."
                if unknown
                else f"{type(self).__name__}.lookup_field: {lookup_field}.",
                f"Choose actions among {', '.join(ACTIONS)}." if unknown else "Name a unique field of the model.",
            )
            return []
        if not 1 <= self.page_size <= self.max_rows:
            self.problem(
                "mcp_django.E117",
                f"{type(self).__name__}: page_size {self.page_size} is not within 1..max_rows ({self.max_rows}).",
                "Make 1 <= page_size <= max_rows.",
            )
            return []
        self._lookup_type = lookup_field[0]
        builders = {"list": self._list_tool, "get": self._get_tool, "create": self._create_tool}
        builders |= {"update": self._update_tool, "delete": self._delete_tool}
        return self.named([builders[action]() for action in ACTIONS if action in self.actions], "mcp_django.E117")

    def _resolve_rows(self, model: type[models.Model]) -> bool:
        """Work out the row's fields and schema; False (with a problem) when they cannot be."""
        name = type(self).__name__
        if self.serializer_class is not None:
            self._row_fields: tuple[str, ...] | None = None
            self._row_schema = serializer_schema(self.serializer_class)
            return True
        if not self.fields:
            self.problem(
                "mcp_django.E112",
                f"{name} sets neither fields nor serializer_class.",
                'List the fields a row shows (or "__all__"), or name a serializer.',
            )
            return False
        if self.fields == "__all__":
            self._row_fields = tuple(field.name for field in model._meta.concrete_fields)
        else:
            concrete = {field.name for field in model._meta.concrete_fields}
            missing = [field for field in self.fields if field not in concrete]
            if missing:
                self.problem(
                    "mcp_django.E111",
                    f"{name}.fields: {model.__name__} has no concrete field {missing[0]!r}.",
                    "Name concrete fields of the model, or use a serializer for others.",
                )
                return False
            self._row_fields = tuple(self.fields)
        self._row_schema = model_schema(model, self._row_fields)
        return True

    def _tool(self, action: str, name: str, description: str, parameters: list[Any], returns: Any) -> Tool:
        scope = self.scope if action in ("list", "get") else (self.write_scope or self.scope)
        implementation = getattr(self, f"_{action}")
        return ToolsetTool(
            tool_function(implementation, name, parameters, returns),
            name=name,
            description=description,
            annotations=_ANNOTATIONS[action],
            scope=scope,
            timeout=self.timeout,
        )

    def _noun(self, plural: bool = False) -> str:
        assert self.model is not None
        return str(self.model._meta.verbose_name_plural if plural else self.model._meta.verbose_name)

    def _list_tool(self) -> Tool:
        page = pydantic.create_model(
            f"{self.model.__name__}Page",  # type: ignore[union-attr]  # checked in build_tools
            items=(list[self._row_schema], ...),  # type: ignore[name-defined]  # built at run time
            count=(int, pydantic.Field(description="How many rows match, over all pages.")),
            offset=(int, ...),
            limit=(int, ...),
            next_offset=(int | None, pydantic.Field(description="The offset of the next page; null on the last.")),
        )
        parameters = [
            parameter(item.argument, Annotated[item.annotation, pydantic.Field(description=item.description)], None)
            for item in self._filters
        ]
        if self._order_paths:
            described = pydantic.Field(description="Fields to order by, first first; a leading - for descending.")
            parameters.append(parameter("order_by", Annotated[ordering_annotation(self._order_paths), described], None))
        limit = pydantic.Field(
            ge=1, le=self.max_rows, description=f"How many rows to return (at most {self.max_rows})."
        )
        # Past what every database's integers hold, an offset is an error of the database (T-5).
        offset = pydantic.Field(ge=0, le=MAX_OFFSET, description="How many matching rows to skip.")
        parameters += [
            parameter("limit", Annotated[int, limit], self.page_size),
            parameter("offset", Annotated[int, offset], 0),
        ]
        description = f"List {self._noun(plural=True)}, {self.page_size} a page (at most {self.max_rows})."
        if self._filters:
            description += f" Filter by {', '.join(sorted({item.path for item in self._filters}))}."
        return self._tool("list", f"list_{self._plural}", description, parameters, page)

    def _lookup_parameter(self) -> Any:
        description = pydantic.Field(description=f"The {self._noun()}'s {self._lookup}.")
        return parameter(self._lookup, Annotated[value_annotation(self._lookup_type), description])

    def _get_tool(self) -> Tool:
        description = f"Get one {self._noun()} by its {self._lookup}."
        return self._tool("get", f"get_{self._basename}", description, [self._lookup_parameter()], self._row_schema)

    def _write_parameters(self, *, partial: bool) -> list[Any]:
        if self.serializer_class is not None:
            return serializer_parameters(self.serializer_class, partial=partial)
        return model_parameters(self._write_fields(), partial=partial)

    def _write_fields(self) -> list[models.Field[Any, Any]]:
        assert self.model is not None
        return writable_fields(self.model, self._row_fields)

    def _create_tool(self) -> Tool:
        parameters = self._write_parameters(partial=False)
        return self._tool(
            "create", f"create_{self._basename}", f"Create a {self._noun()}.", parameters, self._row_schema
        )

    def _update_tool(self) -> Tool:
        parameters = [self._lookup_parameter(), *self._write_parameters(partial=True)]
        description = f"Change a {self._noun()}: only the fields given change."
        return self._tool("update", f"update_{self._basename}", description, parameters, self._row_schema)

    def _delete_tool(self) -> Tool:
        described = pydantic.Field(description=f"The deleted {self._noun()}'s {self._lookup}.")
        fields: dict[str, Any] = {
            "deleted": (bool, ...),
            self._lookup: (value_annotation(self._lookup_type), described),
        }
        deleted = pydantic.create_model(f"{self.model.__name__}Deleted", **fields)  # type: ignore[union-attr]  # checked in build_tools
        description = f"Delete a {self._noun()}."
        return self._tool("delete", f"delete_{self._basename}", description, [self._lookup_parameter()], deleted)

    # -- serving (in the tool's thread)

    def _permission_names(self, action: str) -> list[str]:
        assert self.model is not None
        opts = self.model._meta
        codenames = ("view", "change") if _PERMISSIONS[action] == "view" else (_PERMISSIONS[action],)
        return [f"{opts.app_label}.{get_permission_codename(codename, opts)}" for codename in codenames]

    def _require(self, action: str, ctx: Context) -> None:
        if not self.has_permission(action, ctx):
            verb = {"view": "viewing", "add": "adding", "change": "changing", "delete": "deleting"}[
                _PERMISSIONS[action]
            ]
            needed = self._permission_names(action)[0]
            raise ToolError(f"Permission denied: {verb} {self._noun(plural=True)} needs the {needed} permission.")

    def _row(self, instance: models.Model, ctx: Context) -> dict[str, Any]:
        if self.serializer_class is not None:
            return dict(self.serializer_class(instance, context=self.serializer_context(ctx)).data)
        return instance_fields(instance, self._row_fields)

    def approval_preview(self, tool: Tool) -> Preview | None:
        """For the delete tool: what deleting the row deletes, counted per model (`safety.approvals.cascade`)."""
        if tool.name != f"delete_{self._basename}":
            return None

        def deletes(arguments: Mapping[str, Any], request: Any) -> dict[str, Any]:
            found = self.get_queryset(Context(request)).filter(**{self._lookup: arguments.get(self._lookup)})
            return {"deletes": cascade(found[:1])}

        return deletes

    def _object(self, ctx: Context, value: Any) -> models.Model:
        found: models.Model | None = self.get_queryset(ctx).filter(**{self._lookup: value}).first()
        if found is None:
            raise ToolError(f"No {self._noun()} with {self._lookup} {value!r}.")
        return found

    def _list(self, ctx: Context, **given: Any) -> dict[str, Any]:
        self._require("list", ctx)
        queryset = self.get_queryset(ctx)
        used: list[Filter] = [item for item in self._filters if item.argument in given]
        queryset = queryset.filter(**{_condition(item): given[item.argument] for item in used})
        if any(item.to_many for item in used):
            queryset = queryset.distinct()
        order = list(given.get("order_by") or self.default_ordering or queryset.model._meta.ordering or ())
        if not {"pk", "-pk", self._pk_name(), f"-{self._pk_name()}"} & set(order):
            order.append("pk")
        queryset = queryset.order_by(*order)
        limit, offset = given.get("limit", self.page_size), given.get("offset", 0)
        count = queryset.count()
        rows = list(queryset[offset : offset + limit])
        if self.serializer_class is not None:
            items = list(self.serializer_class(rows, many=True, context=self.serializer_context(ctx)).data)
        else:
            items = [instance_fields(row, self._row_fields) for row in rows]
        end = offset + len(rows)
        return {
            "items": items,
            "count": count,
            "offset": offset,
            "limit": limit,
            "next_offset": end if end < count else None,
        }

    def _pk_name(self) -> str:
        assert self.model is not None
        return self.model._meta.pk.name

    def _get(self, ctx: Context, **given: Any) -> dict[str, Any]:
        self._require("get", ctx)
        return self._row(self._object(ctx, given[self._lookup]), ctx)

    def _save(self, ctx: Context, instance: models.Model | None, given: dict[str, Any]) -> dict[str, Any]:
        """Validate `given` with the serializer or a model form, save, and return the row."""
        if self.serializer_class is not None:
            context = self.serializer_context(ctx)
            serializer = self.serializer_class(instance, data=given, partial=instance is not None, context=context)
            if not serializer.is_valid():
                raise ToolError(f"Invalid {self._noun()}: {describe_errors(serializer.errors)}")
            with transaction.atomic():
                return self._row(serializer.save(), ctx)
        fields = self._write_fields()
        form_class: type[ModelForm[Any]] = modelform_factory(self.model, fields=[field.name for field in fields])  # type: ignore[arg-type]
        if instance is None:
            data = {field.name: field.get_default() for field in fields if field.has_default()}
        else:
            data = model_to_dict(instance, fields=[field.name for field in fields])
        form = form_class(data={**data, **given}, instance=instance)
        if not form.is_valid():
            errors = {
                field: [error["message"] for error in found] for field, found in form.errors.get_json_data().items()
            }
            raise ToolError(f"Invalid {self._noun()}: {describe_errors(errors)}")
        with transaction.atomic():
            return self._row(form.save(), ctx)

    def _create(self, ctx: Context, **given: Any) -> dict[str, Any]:
        self._require("create", ctx)
        return self._save(ctx, None, given)

    def _update(self, ctx: Context, **given: Any) -> dict[str, Any]:
        self._require("update", ctx)
        instance = self._object(ctx, given.pop(self._lookup))
        return self._save(ctx, instance, given)

    def _delete(self, ctx: Context, **given: Any) -> dict[str, Any]:
        self._require("delete", ctx)
        value = given[self._lookup]
        with transaction.atomic():
            self._object(ctx, value).delete()
        return {"deleted": True, self._lookup: value}


def _condition(item: Filter) -> str:
    return item.path if item.lookup == "exact" else f"{item.path}__{item.lookup}"
