"""What a model toolset lets a caller filter and order by: declared field paths and lookups, resolved once.

Nothing here takes a lookup from the caller: each filter argument of a list tool is one `(path, lookup)`
pair the toolset declared, checked against the model when the toolset is built, and each ordering
choice one declared path. An argument outside the schema is refused (`ToolsetTool`), so a caller
cannot reach `password__startswith` or any other lookup the toolset did not name.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal, Optional

from django.core.exceptions import FieldDoesNotExist
from django.db import models

from mcp_django.declarations.django_values import field_type

_TEXT_LOOKUPS: Final = frozenset(
    {"iexact", "contains", "icontains", "startswith", "istartswith", "endswith", "iendswith"}
)
SUPPORTED_LOOKUPS: Final = frozenset({"exact", "gt", "gte", "lt", "lte", "in", "isnull", *_TEXT_LOOKUPS})
"""The lookups a toolset may declare for a filter; transforms (`year`, `lower`, ...) and `regex` are not among them."""

_LOOKUP_WORDS: Final = {
    "exact": "is this",
    "iexact": "is this, ignoring case",
    "contains": "contains this",
    "icontains": "contains this, ignoring case",
    "startswith": "starts with this",
    "istartswith": "starts with this, ignoring case",
    "endswith": "ends with this",
    "iendswith": "ends with this, ignoring case",
    "gt": "is greater than this",
    "gte": "is at least this",
    "lt": "is less than this",
    "lte": "is at most this",
    "in": "is one of these",
    "isnull": "is empty (true) or not (false)",
}


@dataclasses.dataclass(frozen=True)
class Filter:
    """One filter argument of a list tool: `argument` is `path` for `exact`, else `path__lookup`."""

    argument: str
    path: str
    lookup: str
    annotation: Any
    description: str
    to_many: bool


def resolve_field(model: type[models.Model], path: str) -> tuple[models.Field[Any, Any], bool] | str:
    """The concrete field at the end of `path` (`"title"`, `"author__name"`), and whether it crosses a
    to-many relation; or why it is not one (a sentence fragment for a check message)."""
    parts, current, to_many = path.split("__"), model, False
    for index, part in enumerate(parts):
        try:
            field = current._meta.get_field(part)
        except FieldDoesNotExist:
            return f"{current.__name__} has no field {part!r}"
        last = index == len(parts) - 1
        if field.is_relation and (field.many_to_many or field.one_to_many):
            to_many = True
        if last:
            if not getattr(field, "concrete", False) or field.many_to_many:
                return f"{current.__name__}.{part} is not a concrete field"
            return field, to_many  # type: ignore[return-value]  # concrete: a Field
        if not field.is_relation or field.related_model is None:
            return f"{current.__name__}.{part} is not a relation"
        current = field.related_model
    return f"{path!r} is empty"  # pragma: no cover  # split() never returns an empty list


def value_annotation(field: models.Field[Any, Any]) -> Any:
    """The type of a model field's value as an argument: its choices as a `Literal`, else its Python type."""
    if field.choices:
        return Literal[tuple(value for value, _ in field.flatchoices)]
    return field_type(field)


def _annotation(field: models.Field[Any, Any], lookup: str) -> Any:
    value = value_annotation(field)
    if lookup in _TEXT_LOOKUPS:
        return str
    if lookup == "in":
        return list[value]  # type: ignore[valid-type]  # built at run time
    if lookup == "isnull":
        return bool
    if lookup == "exact" and field.null:
        return Optional[value]  # noqa: UP045  # built at run time
    return value


def resolve_filters(
    model: type[models.Model], declared: Mapping[str, Sequence[str]]
) -> tuple[list[Filter], list[tuple[str, str]]]:
    """The filters a toolset declares (`{"title": ["icontains"], "year": ["gte", "lte"]}`), and the problems
    as `(kind, message)`: `"field"` for a path that names no concrete field, `"lookup"` for a lookup."""
    filters: list[Filter] = []
    problems: list[tuple[str, str]] = []
    for path, lookups in declared.items():
        resolved = resolve_field(model, path)
        if isinstance(resolved, str):
            problems.append(("field", f"filter {path!r}: {resolved}"))
            continue
        field, to_many = resolved
        for lookup in [lookups] if isinstance(lookups, str) else lookups:
            if lookup not in SUPPORTED_LOOKUPS or field.get_lookup(lookup) is None:
                problems.append(("lookup", f"filter {path!r}: lookup {lookup!r} is not supported"))
                continue
            description = f"Only rows whose {field.verbose_name} {_LOOKUP_WORDS[lookup]}."
            argument = path if lookup == "exact" else f"{path}__{lookup}"
            filters.append(Filter(argument, path, lookup, _annotation(field, lookup), description, to_many))
    return filters, problems


def resolve_ordering(model: type[models.Model], declared: Sequence[str]) -> tuple[list[str], list[str]]:
    """The paths a caller may order by, and a message for each declared path that names no concrete field."""
    paths: list[str] = []
    problems: list[str] = []
    for path in declared:
        resolved = resolve_field(model, path.lstrip("-"))
        if isinstance(resolved, str):
            problems.append(f"ordering {path!r}: {resolved}")
        else:
            paths.append(path.lstrip("-"))
    return paths, problems


def ordering_annotation(paths: Sequence[str]) -> Any:
    """`list[Literal["title", "-title", ...]]`: the orderings a caller may ask for."""
    choices = tuple(choice for path in paths for choice in (path, f"-{path}"))
    return list[Literal[choices]]  # type: ignore[valid-type]  # built at run time
