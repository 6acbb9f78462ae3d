"""The arguments of writing tools, from a model's fields or a DRF serializer's writable fields; error texts.

Output schemas come from `declarations.django_values` (`model_schema`, `serializer_schema`), the same
code that derives them for `-> Book` and `-> BookSerializer` tools; this module adds the input side.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable
from typing import Annotated, Any, Literal, Optional

import pydantic
from django.db import models

from mcp_django.declarations.django_values import serializer_field_type, serializer_fields
from mcp_django.toolsets.base import parameter
from mcp_django.toolsets.lookups import value_annotation

_NOT_WRITABLE = (models.FileField, models.BinaryField)


def _described(annotation: Any, description: str) -> Any:
    return Annotated[annotation, pydantic.Field(description=description)]


def writable_fields(model: type[models.Model], names: Iterable[str] | None) -> list[models.Field[Any, Any]]:
    """The concrete, editable fields among `names` (every one when None) a tool can write: no key made by the
    database, no many-to-many, no files."""
    wanted = None if names is None else set(names)
    return [
        field
        for field in model._meta.concrete_fields
        if (wanted is None or field.name in wanted)
        and field.editable
        and not isinstance(field, (models.AutoField, *_NOT_WRITABLE))
    ]


def model_parameters(fields: Iterable[models.Field[Any, Any]], *, partial: bool) -> list[inspect.Parameter]:
    """The arguments that write `fields`: required where a form requires them (not blank, no default), all
    optional when `partial`; null allowed where the field allows it."""
    parameters = []
    for field in fields:
        annotation = value_annotation(field)
        if field.null:
            annotation = Optional[annotation]  # noqa: UP045  # built at run time
        description = str(field.help_text or field.verbose_name)
        required = not partial and not field.blank and not field.has_default()
        default = inspect.Parameter.empty if required else None
        parameters.append(parameter(field.name, _described(annotation, description), default))
    return parameters


def _serializer_input_type(field: Any) -> Any:
    from rest_framework import serializers

    if isinstance(field, serializers.ChoiceField) and not isinstance(field, serializers.MultipleChoiceField):
        return Literal[tuple(field.choices)]
    if isinstance(field, serializers.PrimaryKeyRelatedField):
        return int | str
    if isinstance(field, serializers.DecimalField):
        return float | str
    return serializer_field_type(field)


def serializer_parameters(serializer_class: type, *, partial: bool) -> list[inspect.Parameter]:
    """The arguments of a DRF serializer's writable fields: required as the serializer requires them, all
    optional when `partial`; null allowed where the field allows it."""
    parameters = []
    for name, field, annotation, description in serializer_fields(
        serializer_class, writing=True, type_of=_serializer_input_type
    ):
        default = inspect.Parameter.empty if field.required and not partial else None
        parameters.append(parameter(name, _described(annotation, description), default))
    return parameters
