"""The query parameters of a DRF view's list: its filter backends' and its paginator's, as tool arguments.

django-filter's `DjangoFilterBackend` is read through its `FilterSet` (each filter's type, choices and
whether it takes a comma-separated list), never through the backend's OpenAPI methods, which
django-filter 25 removed. Other backends (DRF's `SearchFilter`, `OrderingFilter`) and paginators still
describe their parameters with `get_schema_operation_parameters()`; a backend with neither says nothing.
"""

from __future__ import annotations

import dataclasses
import datetime
import inspect
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Annotated, Any, Final, Literal

import pydantic

from mcp_django.toolsets.base import parameter
from mcp_django.toolsets.lookups import resolve_field, value_annotation

_OPENAPI_TYPES: Final = {"integer": int, "number": float, "boolean": bool, "array": list[str]}

# django-filter's filter classes by name (the package is optional: no import of it here), first match wins
_FILTER_TYPES: Final = (
    ("BooleanFilter", bool),
    ("IsoDateTimeFilter", datetime.datetime),
    ("DateTimeFilter", datetime.datetime),
    ("DateFilter", datetime.date),
    ("TimeFilter", datetime.time),
    ("UUIDFilter", uuid.UUID),
    ("NumberFilter", float),
    ("CharFilter", str),
)


@dataclasses.dataclass(frozen=True)
class QueryArgument:
    """One query parameter as a tool argument: its `parameter`, and how its value goes into the query string."""

    parameter: inspect.Parameter
    encode: Callable[[Any], Any] = lambda value: value

    @property
    def name(self) -> str:
        return self.parameter.name


def query_arguments(view: Any) -> list[QueryArgument]:
    """The query parameters a view's list documents: its filter backends' first, then its paginator's."""
    found: list[QueryArgument] = []
    for backend_class in getattr(view, "filter_backends", ()) or ():
        backend = backend_class()
        if callable(getattr(backend, "get_filterset_class", None)):
            found += _filterset_arguments(backend, view)
        elif callable(getattr(backend, "get_schema_operation_parameters", None)):
            found += _openapi_arguments(backend.get_schema_operation_parameters(view))
    paginator = getattr(view, "paginator", None)
    if paginator is not None and callable(getattr(paginator, "get_schema_operation_parameters", None)):
        found += _openapi_arguments(paginator.get_schema_operation_parameters(view))
    seen: set[str] = set()
    unique = []
    for argument in found:
        if argument.name.isidentifier() and argument.name not in seen:
            seen.add(argument.name)
            unique.append(argument)
    return unique


def _openapi_arguments(documented: Iterable[Mapping[str, Any]]) -> list[QueryArgument]:
    arguments = []
    for item in documented:
        name = str(item.get("name", ""))
        annotation = _OPENAPI_TYPES.get(item.get("schema", {}).get("type"), str)
        arguments.append(_argument(name, annotation, item.get("description") or name, item.get("required", False)))
    return arguments


def _filterset_arguments(backend: Any, view: Any) -> list[QueryArgument]:
    """The arguments of the `FilterSet` django-filter's backend would build for `view`: one per filter."""
    queryset = getattr(view, "queryset", None)
    filterset_class = backend.get_filterset_class(view, queryset)
    if filterset_class is None:
        return []
    model = getattr(getattr(filterset_class, "_meta", None), "model", None)
    if model is None and queryset is not None:
        model = queryset.model
    arguments = []
    for name, item in filterset_class.base_filters.items():
        required = bool(item.extra.get("required", False))
        description = str(item.label or name)
        help_text = item.extra.get("help_text")
        if help_text and not _kind(item, "BaseCSVFilter"):  # a list argument needs no "separate by commas"
            description = f"{description}: {help_text}"
        suffixes = getattr(getattr(item.field_class, "widget", None), "suffixes", None)
        if _kind(item, "RangeFilter") and suffixes:  # two parameters, <name>_min and <name>_max (or _after, _before)
            value = _value_type(item, model)
            for suffix in suffixes:
                arguments.append(_argument(f"{name}_{suffix}", value, f"{description} ({suffix})", False))
            continue
        arguments.append(_filter_argument(name, item, model, description, required))
    return arguments


def _filter_argument(name: str, item: Any, model: Any, description: str, required: bool) -> QueryArgument:
    value = _value_type(item, model)
    if _kind(item, "BaseCSVFilter"):  # in, range, ordering: one parameter, the values comma-separated
        return _argument(name, list[value], description, required, _comma_separated)  # type: ignore[valid-type]  # built at run time
    if _kind(item, "MultipleChoiceFilter"):  # the parameter repeated, one value each
        return _argument(name, list[value], description, required)  # type: ignore[valid-type]  # built at run time
    return _argument(name, value, description, required)


def _value_type(item: Any, model: Any) -> Any:
    """The type of one value of a filter: its choices, the model field's type, or its form field's."""
    if item.lookup_expr.split("__")[-1] == "isnull":
        return bool
    choices = item.extra.get("choices")
    if choices is not None and _kind(item, "ChoiceFilter"):
        values = tuple(value for value, _ in _flat(choices() if callable(choices) else choices) if value != "")
        if values:
            return Literal[values]
    field = resolve_field(model, item.field_name) if model is not None and item.field_name else "unknown"
    field_value = None if isinstance(field, str) or "__" in item.lookup_expr else value_annotation(field[0])
    for class_name, annotation in _FILTER_TYPES:
        if _kind(item, class_name):
            if annotation is float and field_value is int:
                return int
            return annotation
    if _kind(item, "ModelChoiceFilter") or _kind(item, "ModelMultipleChoiceFilter"):
        target = getattr(field[0], "target_field", None) if not isinstance(field, str) else None
        return value_annotation(target) if target is not None else int | str
    return field_value if field_value is not None else str


def _flat(choices: Iterable[Any]) -> Iterable[tuple[Any, Any]]:
    for value, label in choices:
        if isinstance(label, (list, tuple)):  # a named group of choices
            yield from label
        else:
            yield value, label


def _kind(item: Any, class_name: str) -> bool:
    return any(cls.__name__ == class_name for cls in type(item).__mro__)


def _comma_separated(values: Sequence[Any]) -> str:
    return ",".join(str(value) for value in values)


def _argument(
    name: str, annotation: Any, description: Any, required: bool, encode: Callable[[Any], Any] | None = None
) -> QueryArgument:
    described = Annotated[annotation, pydantic.Field(description=str(description))]
    default = inspect.Parameter.empty if required else None
    made = parameter(name, described, default)
    return QueryArgument(made, encode) if encode is not None else QueryArgument(made)


def routed_path(view: type, action: str, *, viewset: bool) -> str | None:
    """The path the project's URLconf serves `view` at (for a viewset, the route of its `action`), or None.

    The request a list call sends carries it, so that what the view builds from the request's path
    (pagination's `next` and `previous` links) points at the API, not at `/`. Only routes that take no
    URL arguments are found (a list's); a view routed nowhere, or only with arguments, gets None.
    """
    from django.urls import NoReverseMatch, get_resolver, reverse

    def names(patterns: Iterable[Any], namespace: str) -> Iterable[str]:
        for pattern in patterns:
            if hasattr(pattern, "url_patterns"):
                inner = f"{namespace}{pattern.namespace}:" if pattern.namespace else namespace
                yield from names(pattern.url_patterns, inner)
                continue
            callback = getattr(pattern, "callback", None)
            if getattr(callback, "cls", None) is not view or not pattern.name:
                continue
            if not viewset or action in (getattr(callback, "actions", None) or {}).values():
                yield namespace + pattern.name

    for name in names(get_resolver().url_patterns, ""):
        try:
            return str(reverse(name))
        except NoReverseMatch:
            continue
    return None
