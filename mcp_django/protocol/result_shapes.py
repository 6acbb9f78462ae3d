"""`tools/call`'s plain text results written as mcp-types writes them, so the common case builds no pydantic model.

Like `shapes`' checks of params, a writer only takes what it knows for certain: a result with anything
else (content other than plain text, annotations, non-JSON values) is left to mcp-types'
`serialize_server_result`, which also refuses what is invalid. Each writer is written against the field
names and annotations of the mcp-types models it stands for, compared once, at import: a model changed
by a new mcp-types release turns its writer off. `tests/fuzz/test_fuzz_shapes.py` checks that every
written result is byte for byte mcp-types' own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, get_args

from mcp_types.methods import SERVER_RESULTS
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from pydantic import BaseModel

from mcp_django.protocol.shapes import _class, _json, _json_copy, _spelled, handshake, stateless

_CALL_RESULT_FIELDS: Final[Mapping[str, list[tuple[str, str]]]] = {
    "handshake": [
        ("_meta", "dict[str, Any] | None"),
        ("content", "list[TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource]"),
        ("isError", "bool | None"),
        ("structuredContent", "dict[str, Any] | None"),
    ],
    "stateless": [
        ("_meta", "ResultMetaObject | None"),
        ("content", "list[TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource]"),
        ("isError", "bool | None"),
        ("resultType", "str"),
        ("structuredContent", "Any | None"),
    ],
}
_TEXT_FIELDS: Final = [
    ("_meta", "{meta}"),
    ("annotations", "Annotations | None"),
    ("text", "str"),
    ("type", "Literal['text']"),
]
_SERVER_INFO: Final = "io.modelcontextprotocol/serverInfo"


def _fields_of(model: type[BaseModel] | None) -> list[tuple[str, str]]:
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        return []
    return [(info.alias or name, _spelled(info.annotation)) for name, info in model.model_fields.items()]


def _flat(value: Any) -> bool:
    """A dict of strings to strings, integers and booleans: what mcp-types dumps as it is."""
    return type(value) is dict and all(
        type(key) is str and type(item) in (str, int, bool) for key, item in value.items()
    )


def _call_result_writer(module: Any) -> Callable[[Mapping[str, Any]], dict[str, Any] | None] | None:
    """The writer of `module`'s `CallToolResult`s of text content, or None if its models are not as written for."""
    stateful = module is handshake
    era = "handshake" if stateful else "stateless"
    text_meta = "dict[str, Any] | None" if stateful else "MetaObject | None"
    expected_text = [(key, annotation.format(meta=text_meta)) for key, annotation in _TEXT_FIELDS]
    if _fields_of(_class(module, "CallToolResult")) != _CALL_RESULT_FIELDS[era]:
        return None
    if _fields_of(_class(module, "TextContent")) != expected_text:
        return None
    if not stateful and _fields_of(_class(module, "ResultMetaObject")) != [(_SERVER_INFO, "Any | None")]:
        return None
    known = frozenset(key for key, _ in _CALL_RESULT_FIELDS[era])

    def write(result: Mapping[str, Any]) -> dict[str, Any] | None:
        if type(result) is not dict or not known.issuperset(result):
            return None
        content = result.get("content")
        if type(content) is not list:
            return None
        texts = []
        for item in content:
            if type(item) is not dict or item.get("type") != "text" or len(item) != 2:  # no _meta, annotations
                return None
            text = item.get("text")
            if type(text) is not str:
                return None
            texts.append({"text": text, "type": "text"})
        written: dict[str, Any] = {}
        meta = result.get("_meta")
        if meta is not None:
            if stateful:
                if not _flat(meta):
                    return None
                written["_meta"] = dict(meta)
            else:
                if type(meta) is not dict or list(meta) != [_SERVER_INFO] or not _flat(meta[_SERVER_INFO]):
                    return None
                written["_meta"] = {_SERVER_INFO: dict(meta[_SERVER_INFO])}
        written["content"] = texts
        is_error = result.get("isError")
        if is_error is not None:
            if type(is_error) is not bool:
                return None
            written["isError"] = is_error
        if not stateful:
            result_type = result.get("resultType")
            if type(result_type) is not str:
                return None
            written["resultType"] = result_type
        structured = result.get("structuredContent")
        if structured is not None:
            if (stateful and type(structured) is not dict) or not _json(structured):
                return None
            written["structuredContent"] = _json_copy(structured)  # mcp-types' dump is a copy too
        return written

    return write


def _result_writers() -> dict[tuple[str, str], Callable[[Mapping[str, Any]], dict[str, Any] | None]]:
    """A writer for each `tools/call` row of mcp-types whose complete result is the `CallToolResult` written for."""
    writers = {}
    for (method, version), row in SERVER_RESULTS.items():
        module = handshake if version in HANDSHAKE_PROTOCOL_VERSIONS else stateless
        arms = get_args(row) or (row,)  # 2026: `CallToolResult | InputRequiredResult`
        if method != "tools/call" or _class(module, "CallToolResult") not in arms:
            continue
        writer = _call_result_writer(module)
        if writer is not None:
            writers[(method, version)] = writer
    return writers


_RESULT_WRITERS: Final = _result_writers()


def known_result(method: str, version: str, result: Mapping[str, Any]) -> dict[str, Any] | None:
    """`result` as mcp-types' `serialize_server_result` writes a complete result of `method`, or None.

    None means "not a shape known here" (content other than plain text, annotations, non-JSON values):
    the caller then asks mcp-types, which also refuses what is invalid.
    """
    write = _RESULT_WRITERS.get((method, version))
    return write(result) if write is not None else None
