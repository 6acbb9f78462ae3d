"""What a declared function's annotations say: the arguments model and input schema, the output schema.

`Signature` compiles the parameters once into a pydantic model (descriptions from the docstring or
`Annotated[..., Field(...)]`); `StructuredOutput` compiles the return annotation into the output
schema and the validator that turns a return value into `structuredContent`.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import json
import re
import sys
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Any, Final, Literal, NotRequired, get_args, get_origin

from typing_extensions import TypedDict, is_typeddict

from mcp_django import content
from mcp_django.context import Context
from mcp_django.declarations.common import AnyFunction, function_name
from mcp_django.declarations.docstrings import parse_docstring
from mcp_django.exceptions import DeclarationError
from mcp_django.protocol.context import RequestContext
from mcp_django.protocol.errors import validation_problems
from mcp_django.runtime.results import is_model

if TYPE_CHECKING:
    import pydantic


def _annotated(tp: Any, *metadata: Any) -> Any:
    """`Annotated[tp, *metadata]` for metadata only known at run time."""
    return Annotated.__class_getitem__((tp, *metadata))  # type: ignore[attr-defined]


def _is_context(annotation: Any) -> bool:
    if get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    return isinstance(annotation, type) and issubclass(annotation, Context)


_PLAIN_DEFAULTS: Final = frozenset({str, int, float, bool, type(None), type(...)})  # `...`: no default


def _needs_alias(name: str) -> bool:
    import pydantic

    return name.startswith(("_", "model_")) or hasattr(pydantic.BaseModel, name)


class ArgumentsInvalid(ValueError):
    """Arguments failed validation; the message names every failing field."""

    def __init__(self, message: str, missing: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.missing = tuple(missing)


def schema_errors() -> tuple[type[Exception], ...]:
    """What pydantic raises for a type it cannot compile (imported here: pydantic loads when first needed)."""
    import pydantic
    import pydantic_core

    return (pydantic.PydanticUserError, pydantic_core.SchemaError, TypeError, ValueError)


def _describe_errors(exc: pydantic.ValidationError) -> ArgumentsInvalid:
    problems = validation_problems(exc)
    parts = [f"{problem.location or '(arguments)'}: {problem.message}" for problem in problems]
    missing = [problem.location for problem in problems if problem.type == "missing" and len(problem.loc) == 1]
    return ArgumentsInvalid("; ".join(parts), missing)


_PLAIN_TYPES: Final = frozenset({str, int, float, bool, type(None), list, tuple, dict})
_PLAIN_ORIGINS: Final = frozenset({list, tuple, dict, typing.Union, types.UnionType})


def plain_annotation(annotation: Any) -> bool:
    """Whether pydantic is sure to compile `annotation`: a JSON scalar, `Any`, `None`, a `Literal` of scalars,
    or a list, tuple, dict or union of such. A declaration typed only so compiles on first use (issue 34:
    a management command that never serves MCP pays no pydantic); any other compiles when declared, so
    its mistake is a `DeclarationError` while `mcp.py` loads (check E261)."""
    if annotation is Any or annotation is None:
        return True
    if isinstance(annotation, type):
        return annotation in _PLAIN_TYPES
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Literal:
        return all(arg is None or type(arg) in (str, int, bool) for arg in args)
    if origin in _PLAIN_ORIGINS and args:
        return all(arg is Ellipsis or plain_annotation(arg) for arg in args)
    return False


@dataclasses.dataclass(frozen=True, slots=True)
class _Compiled:
    """What `Signature` compiles with pydantic: the arguments model, the input schema, each argument's description
    and the model's field for each parameter."""

    model: type[pydantic.BaseModel] | None
    schema: dict[str, Any]
    descriptions: dict[str, str | None]
    fields: tuple[tuple[str, str], ...]


class Signature:
    """The parameters of a declared function, compiled once into a pydantic model.

    Compiled when declared, unless every parameter is `plain_annotation` with a scalar default: then on
    first use (`model`, `schema`, `descriptions`, `bind`).

    Args:
        fn: the declared function.
        owner: how error messages name the declaration, e.g. `"tool 'add'"`.
        build_model: False when the caller supplies the input schema itself.
    """

    def __init__(self, fn: AnyFunction, owner: str, *, build_model: bool = True) -> None:
        try:
            signature = inspect.signature(fn, eval_str=True)
        except (NameError, TypeError) as exc:
            raise DeclarationError(f"{owner}: cannot read the function's signature ({exc})") from exc
        self.owner = owner
        self.description, self._arg_docs = parse_docstring(inspect.getdoc(fn))
        self.return_annotation: Any = signature.return_annotation
        self.context_param: str | None = None
        self.names: list[str] = []
        self.required: list[str] = []
        self._params: list[tuple[str, Any, tuple[Any, ...], Any]] = []  # name, type, Annotated metadata, default
        json_fields: set[str] = set()
        plain = True
        for param in signature.parameters.values():
            annotation = Any if param.annotation is inspect.Parameter.empty else param.annotation
            if _is_context(annotation):
                if self.context_param is not None:
                    raise DeclarationError(f"{owner}: only one parameter may take the Context")
                self.context_param = param.name
                continue
            if param.kind is inspect.Parameter.VAR_KEYWORD and not build_model:
                continue  # with a supplied input schema, **kwargs takes whatever it allows
            if param.kind is not inspect.Parameter.POSITIONAL_OR_KEYWORD and param.kind is not param.KEYWORD_ONLY:
                raise DeclarationError(
                    f"{owner}: parameter {param.name!r} must be passable by keyword (no *args, **kwargs or /)"
                )
            self.names.append(param.name)
            if param.default is inspect.Parameter.empty:
                self.required.append(param.name)
            inner, metadata = annotation, ()
            if get_origin(annotation) is Annotated:
                inner, *rest = get_args(annotation)
                metadata = tuple(rest)
            default = ... if param.default is inspect.Parameter.empty else param.default
            self._params.append((param.name, inner, metadata, default))
            plain = plain and not metadata and plain_annotation(inner) and type(default) in _PLAIN_DEFAULTS
            if inner is not str:
                json_fields.add(param.name)
        self._json_fields = frozenset(json_fields)
        self._name = re.sub(r"\W", "_", function_name(fn))
        self._build_model = build_model
        self.plain = plain
        """Whether compiling is sure to succeed, so it waits for the first use."""
        if not plain:
            self._compiled  # noqa: B018  # a mistake pydantic finds is the declaration's, raised now

    @functools.cached_property
    def _compiled(self) -> _Compiled:
        if not (self._build_model and self._params):
            schema = {"type": "object", "additionalProperties": False}
            return _Compiled(None, schema, {name: self._arg_docs.get(name) for name in self.names}, ())
        import pydantic  # here, not when the package loads: a management command pays none (issue 34)

        definitions: dict[str, Any] = {}
        fields: list[tuple[str, str]] = []
        for name, inner, metadata, default in self._params:
            field_name = f"field_{name}" if _needs_alias(name) else name
            # Our Field first, so a Field(...) the user wrote in Annotated wins over the docstring.
            ours = pydantic.Field(description=self._arg_docs.get(name), alias=name)
            definitions[field_name] = (_annotated(inner, ours, *metadata), default)
            fields.append((field_name, name))
        try:
            model = pydantic.create_model(f"{self._name}Arguments", **definitions)
            schema = model.model_json_schema(by_alias=True)
        except schema_errors() as exc:
            raise DeclarationError(f"{self.owner}: cannot build an input schema ({exc})") from exc
        schema.pop("title", None)
        descriptions = {prop_name: prop.get("description") for prop_name, prop in schema.get("properties", {}).items()}
        return _Compiled(model, schema, descriptions, tuple(fields))

    @property
    def model(self) -> type[pydantic.BaseModel] | None:
        """The arguments model (None without parameters or with a supplied input schema)."""
        return self._compiled.model

    @property
    def schema(self) -> dict[str, Any]:
        """The input schema the model compiles to."""
        return self._compiled.schema

    @property
    def descriptions(self) -> dict[str, str | None]:
        """Each argument's description (from the docstring, or the `Field` in its `Annotated`)."""
        return self._compiled.descriptions

    def bind(self, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        """Validate `arguments` and return the keyword arguments for the function.

        Raises:
            ArgumentsInvalid: the arguments do not fit the signature.
        """
        compiled = self._compiled
        if compiled.model is None:
            return {}
        import pydantic  # loaded by now, with the model

        data = dict(arguments) if arguments else {}
        for key in self._json_fields.intersection(data):
            data[key] = _pre_parse_json(data[key])
        try:
            validated = compiled.model.model_validate(data)
        except pydantic.ValidationError as exc:
            raise _describe_errors(exc) from None
        values = validated.__dict__
        return {param: values[field] for field, param in compiled.fields}


def with_context(kwargs: dict[str, Any], signature: Signature, request: RequestContext) -> dict[str, Any]:
    """`kwargs`, plus the request's `Context` for the parameter that asks for it."""
    if signature.context_param is not None:
        kwargs[signature.context_param] = Context(request)
    return kwargs


def _pre_parse_json(value: Any) -> Any:
    """Undo a client sending a list or object as a JSON string (some model front-ends do)."""
    if isinstance(value, str) and value[:1] in ("[", "{"):
        try:
            return json.loads(value)
        except (ValueError, RecursionError):
            return value
    return value


# ---------------------------------------------------------------- tool output

_CONTENT_CLASSES: Final[tuple[Any, ...]] = (
    content.TextContent,
    content.ImageContent,
    content.AudioContent,
    content.EmbeddedResource,
    content.ResourceLink,
    content.ToolResult,
)
_OBJECT_ORIGINS: Final = (dict, Mapping)


def _strip_annotated(annotation: Any) -> Any:
    while get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    return annotation


def mentions_content(annotation: Any) -> bool:
    annotation = _strip_annotated(annotation)
    if annotation in _CONTENT_CLASSES:
        return True
    return any(mentions_content(arg) for arg in get_args(annotation) if not isinstance(arg, str | int))


def _is_object_type(annotation: Any) -> bool:
    """True for return types whose JSON schema is an object: models, TypedDicts, dataclasses, str-keyed dicts."""
    tp = _strip_annotated(annotation)
    if isinstance(tp, type) and tp not in _PLAIN_TYPES:
        import pydantic

        if issubclass(tp, pydantic.BaseModel) or is_typeddict(tp) or dataclasses.is_dataclass(tp):
            return True
    if tp in (dict, Mapping):
        return True
    if get_origin(tp) in _OBJECT_ORIGINS:
        args = get_args(tp)
        return not args or args[0] is str
    return False


def _readable_typeddict(tp: Any) -> Any:
    """pydantic refuses `typing.TypedDict` before Python 3.12; rebuild one as a `typing_extensions.TypedDict`."""
    if sys.version_info >= (3, 12) or not is_typeddict(tp) or type(tp).__module__ != "typing":
        return tp
    items: dict[str, Any] = {}
    for key, hint in typing.get_type_hints(tp, include_extras=True).items():
        while get_origin(hint) in (typing.Required, typing.NotRequired):
            hint = get_args(hint)[0]
        items[key] = hint if key in tp.__required_keys__ else NotRequired[hint]
    # The functional form, through a cast: the class name is only known at run time.
    rebuilt: Any = typing.cast("Callable[[str, dict[str, Any]], type[Any]]", TypedDict)(tp.__name__, items)
    rebuilt.__doc__, rebuilt.__module__, rebuilt.__qualname__ = tp.__doc__, tp.__module__, tp.__qualname__
    return rebuilt


def _object_root(schema: dict[str, Any]) -> dict[str, Any]:
    """Inline a root `$ref` (pydantic's shape for recursive models): outputSchema needs `type: object` at the root."""
    schema.pop("title", None)
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        definition = schema["$defs"][ref.removeprefix("#/$defs/")]
        schema = {**definition, **{key: value for key, value in schema.items() if key != "$ref"}}
    return schema


_JSON_SCALARS: Final = (str, int, float, bool)


class StructuredOutput:
    """How a tool's return value becomes `structuredContent`, and the `outputSchema` that describes it.

    Object-like return types are the structured content; anything else is
    wrapped as `{"result": value}`, as the official SDK does.
    """

    __slots__ = ("_adapter", "_annotation", "_schema", "_tool_name", "plain", "scalar", "wrap")

    def __init__(self, annotation: Any, tool_name: str) -> None:
        self._annotation, self._tool_name = annotation, tool_name
        self._adapter: pydantic.TypeAdapter[Any] | None = None
        self._schema: dict[str, Any] = {}
        self.wrap = not _is_object_type(annotation)
        # A return value of exactly this JSON scalar type needs no validation or conversion.
        self.scalar: type | None = annotation if annotation in _JSON_SCALARS else None
        self.plain = plain_annotation(annotation)
        """Whether compiling is sure to succeed, so it waits for the first use."""
        if not self.plain:
            self._compile()  # a type pydantic may refuse: the declaration's mistake, found now (as `Signature`'s)

    def _compile(self) -> pydantic.TypeAdapter[Any]:
        """The validator and the output schema, made on first use (when declared, for a type that is not plain)."""
        if self._adapter is not None:
            return self._adapter
        import pydantic  # here, not when the package loads: a management command pays none (issue 34)

        annotation = self._annotation
        if self.wrap:
            model_name = re.sub(r"\W", "_", self._tool_name) + "Output"
            wrapper = pydantic.TypeAdapter(pydantic.create_model(model_name, result=(annotation, ...)))
            self._schema = _object_root(wrapper.json_schema(mode="serialization", by_alias=True))
            adapter: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(annotation)
        else:
            target = _readable_typeddict(_strip_annotated(annotation))
            if annotation is not _strip_annotated(annotation):
                target = _annotated(target, *get_args(annotation)[1:])
            adapter = pydantic.TypeAdapter(target)
            self._schema = _object_root(adapter.json_schema(mode="serialization", by_alias=True))
        self._adapter = adapter
        return adapter

    @property
    def adapter(self) -> pydantic.TypeAdapter[Any]:
        """Validates a return value and dumps it in its JSON-ready form."""
        return self._compile()

    @property
    def schema(self) -> dict[str, Any]:
        """The `outputSchema`."""
        self._compile()
        return self._schema

    def dump(self, value: Any) -> Any:
        """Validate the return value against the annotation and return its JSON-ready form."""
        if self.scalar is not None and type(value) is self.scalar:
            dumped = value
        elif is_model(value) and not self.wrap:
            dumped = value.model_dump(mode="json", by_alias=True)
        else:
            dumped = self.adapter.dump_python(self.adapter.validate_python(value), mode="json", by_alias=True)
        return {"result": dumped} if self.wrap else dumped
