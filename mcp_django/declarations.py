"""Tools, resources, prompts and completions declared as plain Python functions.

Everything a declaration can work out from its function — the input schema, the
output schema, the argument model, the wire dict `tools/list` sends — is worked
out once, when it is declared. A call only validates, runs and converts.

The classes here are what `Registry.tool()`, `.resource()`, `.prompt()` and
`.completion()` build; users meet them through those decorators.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import logging
import re
import sys
import typing
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Annotated, Any, Final, Literal, NotRequired, TypeAlias, get_args, get_origin
from urllib.parse import parse_qsl, unquote

import pydantic
import pydantic_core
from asgiref.sync import iscoroutinefunction, sync_to_async
from typing_extensions import TypedDict, is_typeddict

from mcp_django import content
from mcp_django.context import Context
from mcp_django.protocol.context import RequestContext
from mcp_django.protocol.jsonrpc import InternalError, InvalidParams, MCPError, ResourceNotFound
from mcp_django.scopes import Scope

__all__ = [
    "NAME_PATTERN",
    "Completion",
    "DeclarationError",
    "Icon",
    "Prompt",
    "Resource",
    "ResourceTemplate",
    "Tool",
    "ToolAnnotations",
    "ToolError",
    "UriTemplate",
    "parse_docstring",
]

tool_logger = logging.getLogger("mcp_django.tools")
resource_logger = logging.getLogger("mcp_django.resources")
prompt_logger = logging.getLogger("mcp_django.prompts")
completion_logger = logging.getLogger("mcp_django.completions")

NAME_PATTERN: Final = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
"""The characters and length MCP allows in tool and prompt names (2025-11-25)."""

MAX_COMPLETION_VALUES: Final = 100
"""`completion/complete` returns at most this many values."""

AnyFunction: TypeAlias = Callable[..., Any]


class DeclarationError(TypeError):
    """A tool, resource, prompt or completion cannot be declared as written."""


class ToolError(Exception):
    """Raise from a tool to return an `isError` result whose text is exactly the message.

    Any other exception also becomes an `isError` result, but prefixed with
    "Error executing tool <name>:" and logged with its traceback; `ToolError` is
    for failures the model is meant to read and act on.
    """


class ToolAnnotations(TypedDict, total=False):
    """Hints about a tool's behaviour (all optional; clients must not trust them blindly)."""

    title: str
    readOnlyHint: bool
    destructiveHint: bool
    idempotentHint: bool
    openWorldHint: bool


class Icon(TypedDict):
    """An icon a client may show next to a tool, resource or prompt."""

    src: str
    mimeType: NotRequired[str]
    sizes: NotRequired[list[str]]
    theme: NotRequired[Literal["light", "dark"]]


# ---------------------------------------------------------------- docstrings

_SECTION: Final = re.compile(r"^(\w[\w ]*):\s*$")
_ARG_SECTIONS: Final = frozenset({"args", "arguments", "parameters", "params", "keyword args", "keyword arguments"})
_ARG_LINE: Final = re.compile(r"^(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


def parse_docstring(doc: str | None) -> tuple[str | None, dict[str, str]]:
    """Split a Google-style docstring into its description and its `Args:` descriptions.

    The description is everything before the first section header (`Args:`,
    `Returns:`, `Raises:`, ...), so a multi-paragraph summary survives.

    Returns:
        `(description or None, {argument name: description})`.
    """
    if not doc:
        return None, {}
    lines = inspect.cleandoc(doc).splitlines()
    description: list[str] = []
    arguments: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    base_indent = 0
    for line in lines:
        header = _SECTION.match(line)
        if header and not line.startswith((" ", "\t")):
            section = header.group(1).lower()
            current = None
            continue
        if section is None:
            description.append(line)
            continue
        if section not in _ARG_SECTIONS or not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        entry = _ARG_LINE.match(line.strip())
        if entry and (current is None or indent <= base_indent):
            current, base_indent = entry.group(1).lstrip("*"), indent
            arguments[current] = entry.group(2).strip()
        elif current is not None:
            arguments[current] = f"{arguments[current]} {line.strip()}".strip()
    summary = "\n".join(description).strip()
    return summary or None, arguments


# ---------------------------------------------------------------- signatures


def _annotated(tp: Any, *metadata: Any) -> Any:
    """`Annotated[tp, *metadata]` for metadata only known at run time."""
    return Annotated.__class_getitem__((tp, *metadata))  # type: ignore[attr-defined]


def _is_context(annotation: Any) -> bool:
    if get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    return isinstance(annotation, type) and issubclass(annotation, Context)


def _needs_alias(name: str) -> bool:
    return name.startswith(("_", "model_")) or hasattr(pydantic.BaseModel, name)


class ArgumentsInvalid(ValueError):
    """Arguments failed validation; the message names every failing field."""

    def __init__(self, message: str, missing: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.missing = tuple(missing)


def _describe_errors(exc: pydantic.ValidationError) -> ArgumentsInvalid:
    parts: list[str] = []
    missing: list[str] = []
    for error in exc.errors(include_url=False):
        where = ".".join(str(part) for part in error["loc"]) or "(arguments)"
        if error["type"] == "missing" and len(error["loc"]) == 1:
            missing.append(where)
        parts.append(f"{where}: {error['msg']}")
    return ArgumentsInvalid("; ".join(parts), missing)


class Signature:
    """The parameters of a declared function, compiled once into a pydantic model.

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
        self.description, arg_docs = parse_docstring(inspect.getdoc(fn))
        self.return_annotation: Any = signature.return_annotation
        self.context_param: str | None = None
        self.names: list[str] = []
        self.required: list[str] = []
        self.descriptions: dict[str, str | None] = {}
        self.accepts_any_keyword = False
        self._fields: list[tuple[str, str]] = []
        self._json_fields: frozenset[str] = frozenset()
        definitions: dict[str, Any] = {}
        json_fields: set[str] = set()
        for param in signature.parameters.values():
            annotation = Any if param.annotation is inspect.Parameter.empty else param.annotation
            if _is_context(annotation):
                if self.context_param is not None:
                    raise DeclarationError(f"{owner}: only one parameter may take the Context")
                self.context_param = param.name
                continue
            if param.kind is inspect.Parameter.VAR_KEYWORD and not build_model:
                self.accepts_any_keyword = True
                continue
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
            field_name = f"field_{param.name}" if _needs_alias(param.name) else param.name
            # Our Field first, so a Field(...) the user wrote in Annotated wins over the docstring.
            ours = pydantic.Field(description=arg_docs.get(param.name), alias=param.name)
            default = ... if param.default is inspect.Parameter.empty else param.default
            definitions[field_name] = (_annotated(inner, ours, *metadata), default)
            self._fields.append((field_name, param.name))
            if inner is not str:
                json_fields.add(param.name)
        self._json_fields = frozenset(json_fields)
        self.model: type[pydantic.BaseModel] | None = None
        if build_model and definitions:
            name = re.sub(r"\W", "_", function_name(fn))
            try:
                self.model = pydantic.create_model(f"{name}Arguments", **definitions)
                schema = self.model.model_json_schema(by_alias=True)
            except (pydantic.PydanticUserError, pydantic_core.SchemaError, TypeError, ValueError) as exc:
                raise DeclarationError(f"{owner}: cannot build an input schema ({exc})") from exc
            schema.pop("title", None)
            self.schema: dict[str, Any] = schema
            for prop_name, prop in schema.get("properties", {}).items():
                self.descriptions[prop_name] = prop.get("description")
        else:
            self.schema = {"type": "object", "additionalProperties": False}
            self.descriptions = {name: arg_docs.get(name) for name in self.names}

    def bind(self, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        """Validate `arguments` and return the keyword arguments for the function.

        Raises:
            ArgumentsInvalid: the arguments do not fit the signature.
        """
        if self.model is None:
            return {}
        data = dict(arguments) if arguments else {}
        for key in self._json_fields.intersection(data):
            data[key] = _pre_parse_json(data[key])
        try:
            validated = self.model.model_validate(data)
        except pydantic.ValidationError as exc:
            raise _describe_errors(exc) from None
        values = validated.__dict__
        return {param: values[field] for field, param in self._fields}


def _pre_parse_json(value: Any) -> Any:
    """Undo a client sending a list or object as a JSON string (some model front-ends do)."""
    if isinstance(value, str) and value[:1] in ("[", "{"):
        try:
            return json.loads(value)
        except (ValueError, RecursionError):
            return value
    return value


class _Runner:
    """Calls a declared function: async ones directly, sync ones through `sync_to_async`."""

    __slots__ = ("_call", "fn", "is_async")

    def __init__(self, fn: AnyFunction) -> None:
        self.fn = fn
        self.is_async = iscoroutinefunction(fn) or iscoroutinefunction(type(fn).__call__)
        # thread_sensitive (the default) keeps sync code on the thread Django's ORM expects.
        self._call: Callable[..., Awaitable[Any]] = fn if self.is_async else sync_to_async(fn)

    async def __call__(self, kwargs: dict[str, Any]) -> Any:
        return await self._call(**kwargs)


def _with_context(kwargs: dict[str, Any], signature: Signature, request: RequestContext) -> dict[str, Any]:
    if signature.context_param is not None:
        kwargs[signature.context_param] = Context(request)
    return kwargs


def _scope(owner: str, value: Scope | str | int) -> Scope:
    try:
        return Scope.parse(value)
    except ValueError as exc:
        raise DeclarationError(f"{owner}: {exc}") from None


def function_name(fn: AnyFunction) -> str:
    """The name a declaration takes by default: the function's, or its class's for callable objects."""
    return str(getattr(fn, "__name__", type(fn).__name__))


def _require_description(owner: str, description: str | None) -> str:
    if not description:
        raise DeclarationError(f"{owner} needs a description: give the function a docstring or pass description=")
    return description


def _to_json(value: Any) -> str:
    return pydantic_core.to_json(value, fallback=str).decode()


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


def _mentions_content(annotation: Any) -> bool:
    annotation = _strip_annotated(annotation)
    if annotation in _CONTENT_CLASSES:
        return True
    return any(_mentions_content(arg) for arg in get_args(annotation) if not isinstance(arg, str | int))


def _is_object_type(annotation: Any) -> bool:
    """True for return types whose JSON schema is an object: models, TypedDicts, dataclasses, str-keyed dicts."""
    tp = _strip_annotated(annotation)
    if isinstance(tp, type) and (
        issubclass(tp, pydantic.BaseModel) or is_typeddict(tp) or dataclasses.is_dataclass(tp)
    ):
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


class _StructuredOutput:
    """How a tool's return value becomes `structuredContent`, and the `outputSchema` that describes it.

    Object-like return types are the structured content; anything else is
    wrapped as `{"result": value}`, as the official SDK does.
    """

    __slots__ = ("adapter", "scalar", "schema", "wrap")

    def __init__(self, annotation: Any, tool_name: str) -> None:
        self.wrap = not _is_object_type(annotation)
        # A return value of exactly this JSON scalar type needs no validation or conversion.
        self.scalar: type | None = annotation if annotation in _JSON_SCALARS else None
        if self.wrap:
            model_name = re.sub(r"\W", "_", tool_name) + "Output"
            wrapper = pydantic.TypeAdapter(pydantic.create_model(model_name, result=(annotation, ...)))
            self.schema = _object_root(wrapper.json_schema(mode="serialization", by_alias=True))
            self.adapter: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(annotation)
        else:
            target = _readable_typeddict(_strip_annotated(annotation))
            if annotation is not _strip_annotated(annotation):
                target = _annotated(target, *get_args(annotation)[1:])
            self.adapter = pydantic.TypeAdapter(target)
            self.schema = _object_root(self.adapter.json_schema(mode="serialization", by_alias=True))

    def dump(self, value: Any) -> Any:
        """Validate the return value against the annotation and return its JSON-ready form."""
        if self.scalar is not None and type(value) is self.scalar:
            dumped = value
        elif isinstance(value, pydantic.BaseModel) and not self.wrap:
            dumped = value.model_dump(mode="json", by_alias=True)
        else:
            dumped = self.adapter.dump_python(self.adapter.validate_python(value), mode="json", by_alias=True)
        return {"result": dumped} if self.wrap else dumped


def _is_call_tool_result(value: Any) -> bool:
    """True for a plain dict shaped like a `CallToolResult` (or an `input_required` result)."""
    if not isinstance(value, Mapping):
        return False
    if value.get("resultType") == "input_required":
        return True
    return isinstance(value.get("content"), list) and set(value) <= {"content", "structuredContent", "isError", "_meta"}


def to_content(value: Any, tool_name: str) -> list[dict[str, Any]]:
    """Turn a tool's unstructured return value into content blocks.

    `None` is no content; a string is a text block; a content block (a dict with
    a content `type`) is sent as is; a list or tuple contributes each item;
    bytes become an embedded `application/octet-stream` resource; anything else
    is serialised to JSON text.
    """
    if value is None:
        return []
    if isinstance(value, str):
        return [{"type": "text", "text": value}]
    if isinstance(value, Mapping) and value.get("type") in content.CONTENT_TYPES:
        return [dict(value)]
    if isinstance(value, list | tuple):
        return [block for item in value for block in to_content(item, tool_name)]
    if isinstance(value, bytes | bytearray | memoryview):
        return [
            dict(
                content.embedded_resource(
                    f"mcp-django://tools/{tool_name}/result", blob=bytes(value), mime_type="application/octet-stream"
                )
            )
        ]
    if isinstance(value, pydantic.BaseModel):
        return [{"type": "text", "text": value.model_dump_json(by_alias=True)}]
    return [{"type": "text", "text": _to_json(value)}]


def _error_result(message: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": message}], "isError": True}


def _wire(required: dict[str, Any], optional: Iterable[tuple[str, Any]]) -> dict[str, Any]:
    wire = dict(required)
    for key, value in optional:
        if value is not None and value != {} and value != []:
            wire[key] = value
    return wire


def _plain(value: Any) -> Any:
    """Accept either a TypedDict-shaped dict or an `mcp_types` model for wire metadata."""
    if isinstance(value, pydantic.BaseModel):
        return value.model_dump(by_alias=True, exclude_none=True, mode="json")
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


# ---------------------------------------------------------------- tools


class Tool:
    """A function served as an MCP tool.

    Args:
        fn: the function; sync or async.
        name: the tool name (default: the function's name).
        title: a human-readable title.
        description: what the tool does (default: the docstring's description).
        annotations: behaviour hints (`ToolAnnotations` or an `mcp_types.ToolAnnotations`).
        icons: icons for clients that show them.
        meta: the tool's `_meta`.
        input_schema: an input schema to publish verbatim; the arguments are then
            only checked for required and (with `additionalProperties: false`) unknown
            keys, and passed to the function as keyword arguments.
        output_schema: an output schema to publish verbatim; the return value is then
            sent as `structuredContent` without validation.
        structured_output: None derives structured output from the return annotation;
            False never produces it; True requires a return annotation that supports it.
        scope: the minimum `Scope` a caller needs to see and call the tool (default USER).
    """

    def __init__(
        self,
        fn: AnyFunction,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        annotations: ToolAnnotations | Any | None = None,
        icons: Sequence[Icon | Any] | None = None,
        meta: Mapping[str, Any] | None = None,
        input_schema: Mapping[str, Any] | None = None,
        output_schema: Mapping[str, Any] | None = None,
        structured_output: bool | None = None,
        scope: Scope | str | int = Scope.USER,
    ) -> None:
        self.fn = fn
        self.name: str = name or function_name(fn)
        owner = f"tool {self.name!r}"
        self.scope = _scope(owner, scope)
        self.signature = Signature(fn, owner, build_model=input_schema is None)
        self.description = _require_description(owner, description or self.signature.description)
        self.title = title
        self._verbatim_input = input_schema is not None
        if input_schema is not None:
            if input_schema.get("type") != "object":
                raise DeclarationError(f'{owner}: input_schema needs "type": "object" at its root')
            self.input_schema: dict[str, Any] = dict(input_schema)
            self._required = tuple(input_schema.get("required", ()))
            closed = input_schema.get("additionalProperties") is False
            self._known: frozenset[str] | None = frozenset(input_schema.get("properties", {})) if closed else None
        else:
            self.input_schema = self.signature.schema
        self._output: _StructuredOutput | None = None
        self._verbatim_output = output_schema is not None
        if output_schema is not None:
            self.output_schema: dict[str, Any] | None = dict(output_schema)
        else:
            self._output = self._structured_output(structured_output)
            self.output_schema = self._output.schema if self._output else None
        self._run = _Runner(fn)
        self.wire: dict[str, Any] = _wire(
            {"name": self.name},
            [
                ("title", title),
                ("description", self.description),
                ("inputSchema", self.input_schema),
                ("outputSchema", self.output_schema),
                ("annotations", _plain(annotations)),
                ("icons", _plain(icons)),
                ("_meta", _plain(meta)),
            ],
        )

    def __repr__(self) -> str:
        return f"<Tool {self.name}>"

    def _structured_output(self, wanted: bool | None) -> _StructuredOutput | None:
        annotation = self.signature.return_annotation
        unsupported = (
            annotation in (inspect.Signature.empty, Any, None, type(None), bytes)
            or _mentions_content(annotation)
            or wanted is False
        )
        if unsupported:
            if wanted:
                raise DeclarationError(f"tool {self.name!r}: structured output needs a data return annotation")
            return None
        try:
            return _StructuredOutput(annotation, self.name)
        except (pydantic.PydanticUserError, pydantic_core.SchemaError, TypeError, ValueError) as exc:
            if wanted:
                raise DeclarationError(f"tool {self.name!r}: no output schema for {annotation!r} ({exc})") from exc
            tool_logger.debug("tool %r: return type %r has no JSON schema; output is unstructured", self.name, exc)
            return None

    def _bind(self, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        if not self._verbatim_input:
            return self.signature.bind(arguments)
        given = dict(arguments) if arguments else {}
        problems = [f"{key}: Field required" for key in self._required if key not in given]
        if self._known is not None:
            problems += [f"{key}: Extra inputs are not permitted" for key in given if key not in self._known]
        if problems:
            raise ArgumentsInvalid("; ".join(problems))
        return given

    async def call(self, arguments: Mapping[str, Any] | None, request: RequestContext) -> dict[str, Any]:
        """Validate the arguments, run the function and return its `CallToolResult`.

        Bad arguments, a `ToolError` and any other exception become `isError`
        results; an `MCPError` the function raises propagates as a protocol error.
        """
        try:
            kwargs = self._bind(arguments)
        except ArgumentsInvalid as exc:
            return _error_result(f"Invalid arguments for tool {self.name}: {exc}")
        try:
            value = await self._run(_with_context(kwargs, self.signature, request))
            return self.result(value)
        except MCPError:
            raise
        except ToolError as exc:
            return _error_result(str(exc))
        except Exception as exc:
            tool_logger.exception("Tool %s raised", self.name)
            return _error_result(f"Error executing tool {self.name}: {exc}")

    def result(self, value: Any) -> dict[str, Any]:
        """Convert a return value into a `CallToolResult`."""
        if isinstance(value, content.ToolResult) or (self._output is None and _is_call_tool_result(value)):
            return dict(value)
        if self._verbatim_output:
            return {"content": [{"type": "text", "text": _to_json(value)}], "structuredContent": value}
        if self._output is None:
            return {"content": to_content(value, self.name)}
        structured = self._output.dump(value)
        shown = structured["result"] if self._output.wrap else structured
        text = shown if isinstance(shown, str) else _to_json(shown)
        return {"content": [{"type": "text", "text": text}], "structuredContent": structured}


# ---------------------------------------------------------------- resources

_OPERATORS: Final = {
    # operator: (prefix, separator, value pattern)
    "": ("", ",", r"[^/?#,]+"),
    "+": ("", ",", r".+?"),
    "#": ("#", ",", r".+?"),
    ".": (r"\.", r"\.", r"[^/?#.]+"),
    "/": ("/", "/", r"[^/?#]+"),
    ";": (";", ";", r"[^/?#;]*"),
}
_EXPRESSION: Final = re.compile(r"\{([+#./;?&]?)([^{}]+)\}")


class UriTemplate:
    """An RFC 6570 URI template compiled once into a matcher.

    Simple (`{id}`), reserved (`{+path}`), fragment, label, path-segment
    (`{/a,b}`), path-parameter and query (`{?q,page}`, `{&x}`) expressions are
    understood. Query variables are optional; every other variable must appear.
    Matched values are percent-decoded.
    """

    def __init__(self, template: str) -> None:
        self.template = template
        self.variables: list[str] = []
        self.query_variables: list[str] = []
        pattern: list[str] = []
        groups: dict[str, str] = {}
        position = 0
        for match in _EXPRESSION.finditer(template):
            pattern.append(re.escape(template[position : match.start()]))
            position = match.end()
            operator = match.group(1)
            # Prefix (`:3`) and explode (`*`) modifiers change expansion, not which variable binds.
            names = [name.split(":")[0].rstrip("*").strip() for name in match.group(2).split(",")]
            if operator in ("?", "&"):
                self.query_variables += names
                pattern.append(rf"(?:[?&](?P<_query{len(groups)}>[^#]*))?")
                groups[f"_query{len(groups)}"] = ""
                continue
            prefix, separator, value = _OPERATORS[operator]
            parts = []
            for name in names:
                group = f"_v{len(groups)}"
                groups[group] = name
                self.variables.append(name)
                lead = f"{name}=" if operator == ";" else ""
                parts.append(f"{lead}(?P<{group}>{value})")
            pattern.append(prefix + separator.join(parts))
        pattern.append(re.escape(template[position:]))
        self._groups = groups
        self._regex = re.compile("".join(pattern))

    def __repr__(self) -> str:
        return f"UriTemplate({self.template!r})"

    def match(self, uri: str) -> dict[str, str] | None:
        """Return the variables `uri` binds, or None when it does not fit the template."""
        found = self._regex.fullmatch(uri)
        if found is None:
            return None
        values: dict[str, str] = {}
        for group, text in found.groupdict().items():
            if text is None:
                continue
            if group.startswith("_query"):
                wanted = set(self.query_variables)
                values.update((key, value) for key, value in parse_qsl(text) if key in wanted)
            else:
                values[self._groups[group]] = unquote(text)
        return values


def resource_contents(value: Any, uri: str, mime_type: str | None) -> list[dict[str, Any]]:
    """Turn a resource function's return value into `ReadResourceResult.contents`.

    A string is text and bytes a base64 blob, both with the declared MIME type;
    a `content.resource_contents()` dict or an embedded resource block is used as
    is; a list contributes each item; anything else is serialised to JSON text.
    """
    if isinstance(value, list | tuple):
        return [item for part in value for item in resource_contents(part, uri, mime_type)]
    if isinstance(value, Mapping):
        if value.get("type") == "resource" and isinstance(value.get("resource"), Mapping):
            value = value["resource"]
        if "text" in value or "blob" in value:
            contents = {"uri": uri, **value}
            if mime_type and "mimeType" not in contents:
                contents["mimeType"] = mime_type
            return [contents]
    if isinstance(value, bytes | bytearray | memoryview):
        contents = dict(content.resource_contents(uri, blob=bytes(value), mime_type=mime_type))
    elif isinstance(value, str):
        contents = dict(content.resource_contents(uri, text=value, mime_type=mime_type))
    elif isinstance(value, pydantic.BaseModel):
        contents = dict(content.resource_contents(uri, text=value.model_dump_json(by_alias=True), mime_type=mime_type))
    else:
        contents = dict(content.resource_contents(uri, text=_to_json(value), mime_type=mime_type))
    return [contents]


class Resource:
    """A function served as an MCP resource at a fixed URI.

    The function takes no arguments (apart from an optional `Context`) and
    returns the contents: see `resource_contents()`. Returning None answers
    "resource not found". `scope` is the minimum `Scope` a caller needs to see and read it.
    """

    kind: str = "resource"
    uri_key: str = "uri"

    def __init__(
        self,
        fn: AnyFunction,
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = "text/plain",
        size: int | None = None,
        icons: Sequence[Icon | Any] | None = None,
        annotations: content.Annotations | Any | None = None,
        meta: Mapping[str, Any] | None = None,
        scope: Scope | str | int = Scope.USER,
    ) -> None:
        self.fn = fn
        self.uri = uri
        self.name: str = name or function_name(fn)
        owner = f"{self.kind} {uri!r}"
        self.scope = _scope(owner, scope)
        self.signature = Signature(fn, owner)
        self.description = _require_description(owner, description or self.signature.description)
        self.title = title
        self.mime_type = mime_type
        self._check_parameters(owner)
        self._run = _Runner(fn)
        self.wire: dict[str, Any] = _wire(
            {self.uri_key: uri, "name": self.name},
            [
                ("title", title),
                ("description", self.description),
                ("mimeType", mime_type),
                ("size", size),
                ("icons", _plain(icons)),
                ("annotations", _plain(annotations)),
                ("_meta", _plain(meta)),
            ],
        )

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.uri}>"

    def _check_parameters(self, owner: str) -> None:
        if self.signature.required:
            raise DeclarationError(
                f"{owner}: a fixed URI passes no arguments, but the function requires {self.signature.required}"
            )

    async def read(self, uri: str, variables: Mapping[str, str], request: RequestContext) -> dict[str, Any]:
        """Run the function and return the `ReadResourceResult` for `uri`.

        Raises:
            ResourceNotFound: the variables do not fit the function, or it returned None.
            InternalError: the function raised something other than an `MCPError`.
        """
        try:
            kwargs = self.signature.bind(variables)
        except ArgumentsInvalid:
            raise ResourceNotFound(uri) from None
        try:
            value = await self._run(_with_context(kwargs, self.signature, request))
        except MCPError:
            raise
        except Exception:
            resource_logger.exception("Resource %s raised", uri)
            raise InternalError() from None
        if value is None:
            raise ResourceNotFound(uri)
        return {"contents": resource_contents(value, uri, self.mime_type)}


class ResourceTemplate(Resource):
    """A function served for every URI matching an RFC 6570 template.

    The template's variables are passed to the function as keyword arguments
    (validated and coerced by their annotations, so `id: int` receives an int);
    a URI whose variables fail validation is "resource not found".
    """

    kind = "resource template"
    uri_key = "uriTemplate"

    def __init__(self, fn: AnyFunction, uri_template: str, **options: Any) -> None:
        self.template = UriTemplate(uri_template)
        super().__init__(fn, uri_template, **options)

    def _check_parameters(self, owner: str) -> None:
        variables = set(self.template.variables) | set(self.template.query_variables)
        unknown = sorted(variables - set(self.signature.names))
        if unknown:
            raise DeclarationError(f"{owner}: the function has no parameter for {', '.join(unknown)}")
        unfilled = [name for name in self.signature.required if name not in self.template.variables]
        if unfilled:
            raise DeclarationError(f"{owner}: required parameters {unfilled} are not path variables of the template")


# ---------------------------------------------------------------- prompts


def _message(item: Any) -> dict[str, Any]:
    if isinstance(item, str):
        return dict(content.user_message(item))
    if isinstance(item, Mapping):
        if "role" in item:
            return dict(item)
        if item.get("type") in content.CONTENT_TYPES:
            return {"role": "user", "content": dict(item)}
    if isinstance(item, pydantic.BaseModel):
        return _message(_plain(item))
    raise TypeError(f"a prompt message must be a string, a message dict or a content block, not {type(item).__name__}")


class Prompt:
    """A function served as an MCP prompt.

    Its parameters are the prompt's arguments (required when they have no
    default; descriptions from the docstring or `Annotated[..., Field(...)]`).
    It returns a string (one user message), a message or content block, or a
    list of them. `scope` is the minimum `Scope` a caller needs to see and get it.
    """

    def __init__(
        self,
        fn: AnyFunction,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        icons: Sequence[Icon | Any] | None = None,
        meta: Mapping[str, Any] | None = None,
        scope: Scope | str | int = Scope.USER,
    ) -> None:
        self.fn = fn
        self.name: str = name or function_name(fn)
        owner = f"prompt {self.name!r}"
        self.scope = _scope(owner, scope)
        self.signature = Signature(fn, owner)
        self.description = _require_description(owner, description or self.signature.description)
        self.title = title
        self._run = _Runner(fn)
        arguments = [
            _wire(
                {"name": arg},
                [("description", self.signature.descriptions.get(arg)), ("required", arg in self.signature.required)],
            )
            for arg in self.signature.names
        ]
        self.argument_names = frozenset(self.signature.names)
        self.wire: dict[str, Any] = _wire(
            {"name": self.name},
            [
                ("title", title),
                ("description", self.description),
                ("arguments", arguments),
                ("icons", _plain(icons)),
                ("_meta", _plain(meta)),
            ],
        )

    def __repr__(self) -> str:
        return f"<Prompt {self.name}>"

    async def get(self, arguments: Mapping[str, Any] | None, request: RequestContext) -> dict[str, Any]:
        """Run the function and return the `GetPromptResult`.

        Raises:
            InvalidParams: a required argument is missing or an argument is invalid.
            InternalError: the function raised something other than an `MCPError`.
        """
        try:
            kwargs = self.signature.bind(arguments)
        except ArgumentsInvalid as exc:
            if exc.missing:
                missing = ", ".join(exc.missing)
                raise InvalidParams(f"Missing required arguments for prompt {self.name}: {missing}") from None
            raise InvalidParams(f"Invalid arguments for prompt {self.name}: {exc}") from None
        try:
            value = await self._run(_with_context(kwargs, self.signature, request))
            if isinstance(value, Mapping) and "messages" in value:
                return {"description": self.description, **value}
            items = value if isinstance(value, list | tuple) else [value]
            return {"description": self.description, "messages": [_message(item) for item in items]}
        except MCPError:
            raise
        except Exception:
            prompt_logger.exception("Prompt %s raised", self.name)
            raise InternalError() from None


# ---------------------------------------------------------------- completions

CompletionRef: TypeAlias = tuple[Literal["ref/prompt", "ref/resource"], str, str]
"""`(ref type, prompt name or resource URI/template, argument name)`."""


class Completion:
    """A function that suggests values for one argument of a prompt or resource template.

    The function receives the partial `value` and, if it takes a second
    positional parameter, the other arguments already filled in
    (`context_arguments`); it may also take a `Context`. It returns an iterable
    of strings; at most 100 are sent, with `total` and `hasMore` set.
    """

    def __init__(
        self, fn: AnyFunction, *, prompt: str | None = None, resource: str | None = None, argument: str
    ) -> None:
        if (prompt is None) == (resource is None):
            raise DeclarationError("a completion names exactly one of prompt= or resource=")
        self.fn = fn
        self.ref: CompletionRef = (
            ("ref/prompt", prompt, argument) if prompt else ("ref/resource", resource or "", argument)
        )
        owner = f"completion for {self.ref[0].removeprefix('ref/')} {self.ref[1]!r} argument {argument!r}"
        self.signature = Signature(fn, owner, build_model=False)
        positional = len(self.signature.names)
        if positional not in (1, 2):
            raise DeclarationError(f"{owner}: the function takes (value) or (value, context_arguments)")
        self._positional = positional
        self._run = _Runner(fn)

    def __repr__(self) -> str:
        return f"<Completion {self.ref}>"

    async def complete(
        self, value: str, context_arguments: Mapping[str, str], request: RequestContext
    ) -> dict[str, Any]:
        """Return the `completion` member: `values` (at most 100), `total` and `hasMore`."""
        names = self.signature.names
        kwargs: dict[str, Any] = {names[0]: value}
        if self._positional == 2:
            kwargs[names[1]] = dict(context_arguments)
        try:
            suggestions = await self._run(_with_context(kwargs, self.signature, request))
        except MCPError:
            raise
        except Exception:
            completion_logger.exception("Completion %s raised", self.ref)
            raise InternalError() from None
        values = [str(item) for item in suggestions or ()]
        return {
            "values": values[:MAX_COMPLETION_VALUES],
            "total": len(values),
            "hasMore": len(values) > MAX_COMPLETION_VALUES,
        }
