"""Django values out of declared functions: QuerySets and model instances, evaluated where the ORM may run.

A sync tool (or resource, or prompt) that returns `Book.objects.filter(...)` hands back a lazy QuerySet;
turned into JSON on the event loop it would query there and fail with `SynchronousOnlyOperation`.
`evaluate` runs in the function's own thread (`declarations.common.Runner` calls it there; for an async
function it runs through `run_sync`) and makes the value plain:

- a QuerySet becomes a list of its rows: a dict of fields per instance, `values()` dicts and
  `values_list()` tuples as they are;
- a model instance becomes a dict of its concrete fields (a relation as the related row's key, as
  `model_to_dict` and DRF's default serializer give it);
- a list or tuple of instances becomes a list of such dicts; a DRF `Serializer` instance, its `.data`.

`output_annotation` turns a return annotation that names a model (`-> Book`, `-> list[Book]`,
`-> Book | None`) into the pydantic model of its fields, so the tool publishes an output schema and
its result is structured content; a bare `QuerySet` annotation is a list of rows. A tool annotated with
a pydantic model (`-> list[BookInfo]`) may return instances or a QuerySet too: the rows' fields fill it.
Django is imported only when a value or annotation is Django's.
"""

from __future__ import annotations

import datetime
import decimal
import functools
import sys
import uuid
from collections.abc import Sequence
from typing import Any, Final, Optional, Union, get_args, get_origin

import pydantic

__all__ = ["evaluate", "model_schema", "needs_evaluation", "output_annotation"]

_PLAIN: Final = frozenset({str, int, float, bool, type(None), dict, bytes})


def _models() -> Any:
    """`django.db.models` when Django's ORM is loaded, else None (then no value can be one of its)."""
    return sys.modules.get("django.db.models")


def needs_evaluation(value: Any) -> bool:
    """True for a value `evaluate` changes: a QuerySet, a model instance, a sequence holding one, a serializer."""
    if type(value) in _PLAIN:
        return False
    models = _models()
    if models is None:
        return False
    if isinstance(value, models.QuerySet | models.Model):
        return True
    if isinstance(value, list | tuple):
        return any(isinstance(item, models.Model) for item in value)
    return _is_serializer(value)


def evaluate(value: Any) -> Any:
    """The value with QuerySets evaluated and instances as dicts of their fields (see the module docstring).

    Call it where the ORM may run: it queries.
    """
    if not needs_evaluation(value):
        return value
    models = _models()
    if isinstance(value, models.Model):
        return instance_fields(value)
    if isinstance(value, models.QuerySet | list | tuple):
        return [instance_fields(row) if isinstance(row, models.Model) else row for row in value]
    return value.data  # a DRF serializer: its representation, which may query


def instance_fields(instance: Any) -> dict[str, Any]:
    """A model instance's concrete fields by name; a relation is the related row's key."""
    return {field.name: field.value_from_object(instance) for field in instance._meta.concrete_fields}


def _is_serializer(value: Any) -> bool:
    serializers = sys.modules.get("rest_framework.serializers")
    return serializers is not None and isinstance(value, serializers.BaseSerializer)


def output_annotation(annotation: Any) -> Any:
    """The annotation with every model class replaced by the pydantic model of its fields, a bare QuerySet by a list.

    Anything that names no model is returned as it is.
    """
    models = _models()
    if models is None:
        return annotation
    if isinstance(annotation, type):
        if issubclass(annotation, models.Model):
            return model_schema(annotation)
        if issubclass(annotation, models.QuerySet):
            return list[Any]
        return annotation
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is None or not args:
        return annotation
    replaced = tuple(output_annotation(arg) for arg in args)
    if replaced == args:
        return annotation
    if origin is Union or type(annotation).__name__ == "UnionType":
        return Union[replaced]  # noqa: UP007  # built from a tuple of types
    if origin in (list, Sequence, tuple, set, frozenset):
        return list[replaced[0]] if origin is not tuple else tuple[replaced]  # type: ignore[valid-type]  # built at run time
    return annotation


_FIELD_TYPES: Final[dict[str, Any]] = {
    "AutoField": int,
    "BigAutoField": int,
    "SmallAutoField": int,
    "IntegerField": int,
    "BigIntegerField": int,
    "SmallIntegerField": int,
    "PositiveIntegerField": int,
    "PositiveBigIntegerField": int,
    "PositiveSmallIntegerField": int,
    "BooleanField": bool,
    "NullBooleanField": bool,
    "FloatField": float,
    "DecimalField": decimal.Decimal,
    "CharField": str,
    "TextField": str,
    "SlugField": str,
    "EmailField": str,
    "URLField": str,
    "FilePathField": str,
    "FileField": str,
    "ImageField": str,
    "GenericIPAddressField": str,
    "DateField": datetime.date,
    "DateTimeField": datetime.datetime,
    "TimeField": datetime.time,
    "DurationField": datetime.timedelta,
    "UUIDField": uuid.UUID,
    "JSONField": Any,
    "BinaryField": bytes,
}


def _python_type(field: Any) -> Any:
    """The Python type of a concrete field's value (a relation: its target's key)."""
    if field.is_relation:
        return _python_type(field.target_field)
    for cls in type(field).__mro__:
        if cls.__name__ in _FIELD_TYPES:
            return _FIELD_TYPES[cls.__name__]
    return Any


@functools.cache
def model_schema(model: type) -> type[pydantic.BaseModel]:
    """The pydantic model of a Django model's concrete fields: types, nullability, help texts as descriptions."""
    fields: dict[str, Any] = {}
    for field in model._meta.concrete_fields:  # type: ignore[attr-defined]  # a Django model
        python_type = _python_type(field)
        if field.null:
            python_type = Optional[python_type]  # noqa: UP045  # built at run time
        description = str(field.help_text or field.verbose_name)
        fields[field.name] = (python_type, pydantic.Field(description=description))
    doc = (model.__doc__ or "").strip()
    generated: type[pydantic.BaseModel] = pydantic.create_model(
        model.__name__, __doc__=doc if doc and not doc.startswith(f"{model.__name__}(") else None, **fields
    )
    return generated
