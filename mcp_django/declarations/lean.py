"""Lean tool definitions: `tools/list` without what a model reads for nothing.

Every definition `tools/list` returns goes into a model's context on every turn. pydantic writes JSON
Schema for people filling in forms: a `title` on every property and model that repeats its name
(`"Birth Year"` for `birth_year`), `"default": null` on every optional argument; Django adds a
`description` that repeats a field's name (`"birth year"`); a docstring written for Python readers
carries `Args:`, NumPy `Parameters` or `:param x:` sections whose text belongs in each argument's
`description`. The lean form, served by default, leaves those out; a title or description that says
more than the name stays. `Endpoint(definitions="verbose")` serves the definitions as they were built.

Only schemas mcp_django generates are made lean: a declaration's, a toolset's, a bus action's; an
`input_schema=` or `output_schema=` given verbatim, and a remote server's tools, are served unchanged.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Mapping
from typing import Any, Final, Literal

from mcp_django.declarations.docstrings import parse_docstring

Definitions = Literal["lean", "verbose"]
DEFINITIONS: Final[tuple[Definitions, ...]] = ("lean", "verbose")
"""The values of the endpoint option `definitions`: `"lean"` (the default) or `"verbose"`."""

_NAMED: Final = frozenset({"properties", "$defs", "definitions", "patternProperties"})
"""Keywords whose value maps names to schemas: each schema's title or description may repeat its name."""
_DATA: Final = frozenset({"default", "const", "enum", "examples", "x-mcp-header"})
"""Keywords whose value is data, not a schema: left as they are."""
_SPELLING: Final = re.compile(r"[^0-9a-z]")
_ANCHORS: Final = frozenset({"$id", "$anchor", "$dynamicAnchor"})
_ANNOTATIONS: Final = frozenset({"title", "description"})


def verbose(ctx: Any) -> bool:
    """Whether the endpoint `ctx`'s request arrived on serves verbose definitions (`definitions="verbose"`)."""
    return getattr(getattr(ctx, "endpoint", None), "definitions", "lean") == "verbose"


def _spelled(text: str) -> str:
    return _SPELLING.sub("", text.lower())


def _repeats(key: str, value: Any, name: str) -> bool:
    """Whether `key: value` is a title or description that only repeats `name`."""
    return key in ("title", "description") and isinstance(value, str) and _spelled(value) == _spelled(name)


def lean_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of `schema` without the titles and descriptions that only repeat the name of the property or
    `$defs` model they describe (`"title": "Birth Year"` on `birth_year`, `"description": "ID"` on `id`),
    without a property's `"default": null` (an argument left out is None all the same), and with each
    `$defs` model used once written in its place (a model used twice or more stays shared in `$defs`)."""
    lean: dict[str, Any] = _lean(schema, None)
    kept: set[str] = set()
    while isinstance(lean.get("$defs"), dict) and (key := _used_once(lean, kept)) is not None:
        reference = f"#/$defs/{key}"
        inlined = _inlined(lean, reference, lean["$defs"][key])
        if json.dumps(reference) in json.dumps(inlined):
            kept.add(key)  # its reference has keywords of its own beside it
            continue
        lean = inlined
        del lean["$defs"][key]
    if lean.get("$defs") == {}:
        del lean["$defs"]
    return lean


def _used_once(schema: dict[str, Any], kept: set[str]) -> str | None:
    """A `$defs` key (not in `kept`) referred to exactly once, from outside its own definition, whose
    definition has no `$id` or anchor of its own."""
    text = json.dumps(schema)
    for key, definition in schema["$defs"].items():
        reference = json.dumps(f"#/$defs/{key}")
        if key in kept or "/" in key or "~" in key or not isinstance(definition, dict) or _ANCHORS & definition.keys():
            continue
        if text.count(reference) == 1 and reference not in json.dumps(definition):
            return str(key)
    return None


def _inlined(node: Any, reference: str, definition: dict[str, Any]) -> Any:
    """`node` with the schema `{"$ref": reference, ...}` replaced by `definition` (with its annotations)."""
    if isinstance(node, list):
        return [_inlined(item, reference, definition) for item in node]
    if not isinstance(node, dict):
        return node
    if node.get("$ref") == reference:
        beside = {key: value for key, value in node.items() if key != "$ref"}
        if beside.keys() - _ANNOTATIONS or beside.keys() & definition.keys() - _ANNOTATIONS:
            return node  # keywords that would have to apply together: left as a reference
        return {**definition, **beside}
    return {key: _inlined(value, reference, definition) for key, value in node.items()}


def _lean(node: Any, name: str | None) -> Any:
    if isinstance(node, list):
        return [_lean(item, None) for item in node]
    if not isinstance(node, Mapping):
        return node
    lean: dict[str, Any] = {}
    for key, value in node.items():
        if name is not None and (_repeats(key, value, name) or (key == "default" and value is None)):
            continue
        if key in _DATA:
            lean[key] = value
        elif key in _NAMED and isinstance(value, Mapping):
            lean[key] = {child: _lean(schema, str(child)) for child, schema in value.items()}
        else:
            lean[key] = _lean(value, None)
    return lean


def lean_definition(wire: Mapping[str, Any], *, arguments: bool = True, output: bool = True) -> dict[str, Any]:
    """The lean form of the tool definition `wire` (a copy).

    Args:
        wire: the tool as `tools/list` returns it.
        arguments: whether its `inputSchema` was generated, so it and the description may be made lean:
            the description keeps its text before the first docstring section, and each argument's text
            of an `Args:`/`Parameters`/`:param:` section becomes its property's `description` where it
            has none.
        output: whether its `outputSchema` was generated, so it may be made lean.
    """
    lean = dict(wire)
    if output and isinstance(wire.get("outputSchema"), Mapping):
        lean["outputSchema"] = lean_schema(wire["outputSchema"])
    if not arguments or not isinstance(wire.get("inputSchema"), Mapping):
        return lean
    schema = lean["inputSchema"] = lean_schema(wire["inputSchema"])
    text = wire.get("description")
    summary, documented = parse_docstring(text) if isinstance(text, str) else (None, {})
    if summary is None or summary == inspect.cleandoc(str(text)).strip():
        return lean  # no docstring section: the description as written
    lean["description"] = summary
    properties = schema.get("properties")
    for argument, described in documented.items():
        prop = properties.get(argument) if isinstance(properties, dict) else None
        if isinstance(prop, dict) and not prop.get("description"):
            prop["description"] = described
    return lean
