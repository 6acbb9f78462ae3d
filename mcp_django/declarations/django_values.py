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
A tool annotated with a DRF serializer (`-> BookSerializer`, `-> list[BookSerializer]`) publishes the
schema of the serializer's output, and what it returns (instances, a QuerySet, or the serializer) is
serialized with it in the tool's thread.
Django is imported only when a value or annotation is Django's.
"""

from __future__ import annotations

import datetime
import decimal
import functools
import sys
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Final, Literal, Optional, Union, get_args, get_origin

if TYPE_CHECKING:
    import pydantic

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


def evaluate(value: Any, serializer: tuple[type, bool] | None = None) -> Any:
    """The value with QuerySets evaluated and instances as dicts of their fields (see the module docstring).

    Call it where the ORM may run: it queries.

    Args:
        value: what a declared function returned.
        serializer: the DRF serializer class the function's return annotation names, and whether it
            names a list of them: instances and QuerySets are serialized with it.
    """
    if not needs_evaluation(value):
        return value
    if serializer is not None and not _is_serializer(value) and value is not None:
        serializer_class, many = serializer
        return serializer_class(value, many=many).data
    models = _models()
    if isinstance(value, models.Model):
        return instance_fields(value)
    if isinstance(value, models.QuerySet | list | tuple):
        return [instance_fields(row) if isinstance(row, models.Model) else row for row in value]
    return value.data  # a DRF serializer: its representation, which may query


def instance_fields(instance: Any, fields: tuple[str, ...] | None = None) -> dict[str, Any]:
    """A model instance's concrete fields by name (only `fields` when given); a relation is the related row's key."""
    return {
        field.name: field.value_from_object(instance)
        for field in instance._meta.concrete_fields
        if fields is None or field.name in fields
    }


def _is_serializer(value: Any) -> bool:
    serializers = sys.modules.get("rest_framework.serializers")
    return serializers is not None and isinstance(value, serializers.BaseSerializer)


def named_serializer(annotation: Any) -> tuple[type, bool] | None:
    """The DRF serializer class a return annotation names (`BookSerializer`, `list[BookSerializer]`,
    `BookSerializer | None`), and whether it is a list of them; None when it names none."""
    serializers = sys.modules.get("rest_framework.serializers")
    if serializers is None:
        return None
    if isinstance(annotation, type):
        return (annotation, False) if issubclass(annotation, serializers.BaseSerializer) else None
    origin, args = get_origin(annotation), get_args(annotation)
    if origin in (list, Sequence) and len(args) == 1:
        found = named_serializer(args[0])
        return (found[0], True) if found is not None and not found[1] else None
    if origin is Union or type(annotation).__name__ == "UnionType":
        named = [arg for arg in args if arg is not type(None)]
        return named_serializer(named[0]) if len(named) == 1 else None
    return None


def output_annotation(annotation: Any) -> Any:
    """The annotation with every model class replaced by the pydantic model of its fields, a bare QuerySet by a
    list, and a DRF serializer class by the pydantic model of its output fields.

    Anything that names neither is returned as it is.
    """
    models = _models()
    if models is None:
        return annotation
    if isinstance(annotation, type):
        if issubclass(annotation, models.Model):
            return model_schema(annotation)
        if named_serializer(annotation) is not None:
            return serializer_schema(annotation)
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


def field_type(field: Any) -> Any:
    """The Python type of a concrete field's value (a relation: its target's key)."""
    if field.is_relation:
        return field_type(field.target_field)
    for cls in type(field).__mro__:
        if cls.__name__ in _FIELD_TYPES:
            return _FIELD_TYPES[cls.__name__]
    return Any


@functools.cache
def model_schema(model: type, only: tuple[str, ...] | None = None) -> type[pydantic.BaseModel]:
    """The pydantic model of a Django model's concrete fields (only those named in `only` when given):
    types, nullability, help texts as descriptions."""
    import pydantic  # here, not when the package loads: a management command pays none (issue 34)

    fields: dict[str, Any] = {}
    for field in model._meta.concrete_fields:  # type: ignore[attr-defined]  # a Django model
        if only is not None and field.name not in only:
            continue
        python_type = field_type(field)
        if field.null:
            python_type = Optional[python_type]  # noqa: UP045  # built at run time
        description = str(field.help_text or field.verbose_name)
        fields[field.name] = (python_type, pydantic.Field(description=description))
    doc = (model.__doc__ or "").strip()
    generated: type[pydantic.BaseModel] = pydantic.create_model(
        model.__name__, __doc__=doc if doc and not doc.startswith(f"{model.__name__}(") else None, **fields
    )
    return generated


_SERIALIZER_FIELD_TYPES: Final[dict[str, Any]] = {
    "IntegerField": int,
    "FloatField": float,
    "BooleanField": bool,
    "NullBooleanField": bool,
    "CharField": str,
    "EmailField": str,
    "RegexField": str,
    "SlugField": str,
    "URLField": str,
    "IPAddressField": str,
    "UUIDField": str,
    "DateTimeField": str,
    "DateField": str,
    "TimeField": str,
    "DurationField": str,
    "FileField": str,
    "ImageField": str,
    "DictField": dict[str, Any],
    "HStoreField": dict[str, Any],
    "ListField": list[Any],
    "MultipleChoiceField": list[Any],
}
"""The JSON type of a DRF field's representation (dates and UUIDs are strings in DRF's output)."""


def serializer_field_type(field: Any) -> Any:
    """The JSON-ready Python type of a DRF field's representation (a nested serializer: its pydantic model)."""
    serializers = sys.modules["rest_framework.serializers"]
    if isinstance(field, serializers.ListSerializer):
        return list[serializer_field_type(field.child)]  # type: ignore[misc]  # built at run time
    if isinstance(field, serializers.BaseSerializer):
        nested: type = field.__class__
        return serializer_schema(nested)
    if isinstance(field, serializers.DecimalField):
        return str if field.coerce_to_string is not False else float
    if isinstance(field, serializers.ChoiceField) and not isinstance(field, serializers.MultipleChoiceField):
        return Literal[tuple(field.choices)] if field.choices else Any  # the choice's value, as DRF outputs it
    if isinstance(field, serializers.ManyRelatedField):
        return list[_key_type(field.child_relation, field)]  # type: ignore[misc]  # built at run time
    if isinstance(field, serializers.PrimaryKeyRelatedField):
        return _key_type(field, field)
    for cls in type(field).__mro__:
        if cls.__name__ in _SERIALIZER_FIELD_TYPES:
            return _SERIALIZER_FIELD_TYPES[cls.__name__]
    return Any  # other related fields, method fields: whatever they represent


def _key_type(field: Any, holder: Any) -> Any:
    """The type of a related field's output: a primary key's (the field's `pk_field`, else its model's)."""
    serializers = sys.modules["rest_framework.serializers"]
    if not isinstance(field, serializers.PrimaryKeyRelatedField):
        return serializer_field_type(field)
    if field.pk_field is not None:
        return serializer_field_type(field.pk_field)
    queryset = field.queryset if field.queryset is not None else _parent_queryset(holder)
    return field_type(queryset.model._meta.pk) if queryset is not None else int | str


def _parent_queryset(field: Any) -> Any:
    """A read-only related field's target rows (it has no queryset): through its model serializer's model."""
    meta = getattr(getattr(field, "parent", None), "Meta", None)
    model = getattr(meta, "model", None)
    source = getattr(field, "source", None) or getattr(field, "field_name", None)
    if model is None or not source:
        return None
    for candidate in model._meta.get_fields():  # a field by its name, or a reverse relation by its accessor
        accessor = candidate.get_accessor_name() if candidate.auto_created and not candidate.concrete else None
        if source in (candidate.name, accessor) and candidate.related_model is not None:
            return candidate.related_model._default_manager.none()
    return None


def serializer_fields(
    serializer_class: type, *, writing: bool, type_of: Callable[[Any], Any] = serializer_field_type
) -> Iterator[tuple[str, Any, Any, str]]:
    """`(name, field, type, description)` of each field a DRF serializer reads (`writing`) or outputs.

    The type is `type_of(field)`, optional where the field allows null; the description is the field's
    help text, else its label, else its name.
    """
    for name, field in serializer_class().fields.items():
        if field.read_only if writing else field.write_only:
            continue
        annotation = type_of(field)
        if getattr(field, "allow_null", False):
            annotation = Optional[annotation]  # noqa: UP045  # built at run time
        yield name, field, annotation, str(field.help_text or field.label or name)


@functools.cache
def serializer_schema(serializer_class: type) -> type[pydantic.BaseModel]:
    """The pydantic model of what a DRF serializer outputs: its readable fields, nullable where they allow null."""
    import pydantic  # here, not when the package loads: a management command pays none (issue 34)

    fields: dict[str, Any] = {
        field.field_name or name: (python_type, pydantic.Field(description=description))
        for name, field, python_type, description in serializer_fields(serializer_class, writing=False)
    }
    doc = (serializer_class.__doc__ or "").strip()
    generated: type[pydantic.BaseModel] = pydantic.create_model(
        serializer_class.__name__.removesuffix("Serializer") or serializer_class.__name__,
        __doc__=doc or None,
        **fields,
    )
    return generated
