"""Helpers that build MCP content blocks, resource contents, prompt messages and tool results.

Every helper returns a plain dict already in wire shape (the TypedDicts below
describe them for type checkers), so what a tool returns is exactly what the
client receives. Binary data is given as `bytes` and base64-encoded here; a
`str` is taken to be base64 already.

    from mcp_django import content

    @mcp_django.tool
    def chart() -> list[content.ContentBlock]:
        \"\"\"Draw the weekly sales chart.\"\"\"
        return [content.text("Sales this week:"), content.image(render_png(), "image/png")]
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, NotRequired, TypeAlias, cast

from typing_extensions import TypedDict

from mcp_django.protocol.results import tool_error

__all__ = [
    "CONTENT_TYPES",
    "Annotations",
    "AudioContent",
    "BlobResourceContents",
    "ContentBlock",
    "EmbeddedResource",
    "ImageContent",
    "PromptMessage",
    "ResourceContents",
    "ResourceLink",
    "TextContent",
    "TextResourceContents",
    "ToolResult",
    "assistant_message",
    "audio",
    "embedded_resource",
    "error",
    "image",
    "resource_contents",
    "resource_link",
    "text",
    "tool_result",
    "user_message",
]

CONTENT_TYPES = frozenset({"text", "image", "audio", "resource", "resource_link"})
"""The `type` values of MCP content blocks."""


class Annotations(TypedDict, total=False):
    """Hints for the client about who a block is for and how much it matters."""

    audience: list[Literal["user", "assistant"]]
    priority: float
    lastModified: str


class TextContent(TypedDict):
    type: Literal["text"]
    text: str
    annotations: NotRequired[Annotations]
    _meta: NotRequired[dict[str, Any]]


class ImageContent(TypedDict):
    type: Literal["image"]
    data: str
    mimeType: str
    annotations: NotRequired[Annotations]
    _meta: NotRequired[dict[str, Any]]


class AudioContent(TypedDict):
    type: Literal["audio"]
    data: str
    mimeType: str
    annotations: NotRequired[Annotations]
    _meta: NotRequired[dict[str, Any]]


class TextResourceContents(TypedDict):
    uri: str
    text: str
    mimeType: NotRequired[str]
    _meta: NotRequired[dict[str, Any]]


class BlobResourceContents(TypedDict):
    uri: str
    blob: str
    mimeType: NotRequired[str]
    _meta: NotRequired[dict[str, Any]]


ResourceContents: TypeAlias = TextResourceContents | BlobResourceContents


class EmbeddedResource(TypedDict):
    type: Literal["resource"]
    resource: ResourceContents
    annotations: NotRequired[Annotations]
    _meta: NotRequired[dict[str, Any]]


class ResourceLink(TypedDict):
    type: Literal["resource_link"]
    uri: str
    name: str
    title: NotRequired[str]
    description: NotRequired[str]
    mimeType: NotRequired[str]
    size: NotRequired[int]
    annotations: NotRequired[Annotations]
    _meta: NotRequired[dict[str, Any]]


ContentBlock: TypeAlias = TextContent | ImageContent | AudioContent | EmbeddedResource | ResourceLink
"""Any MCP content block; annotate a tool's return with it (or a list of it) for unstructured output."""


class PromptMessage(TypedDict):
    role: Literal["user", "assistant"]
    content: ContentBlock


class ToolResult(dict[str, Any]):
    """A complete `CallToolResult`; a tool that returns one has it sent as is.

    Build it with `tool_result()` or `error()`.
    """


def _b64(data: bytes | str) -> str:
    if isinstance(data, bytes | bytearray | memoryview):
        return base64.b64encode(data).decode("ascii")
    return data


def _decorate(block: dict[str, Any], annotations: Annotations | None, meta: Mapping[str, Any] | None) -> None:
    if annotations:
        block["annotations"] = dict(annotations)
    if meta:
        block["_meta"] = dict(meta)


def text(value: str, *, annotations: Annotations | None = None, meta: Mapping[str, Any] | None = None) -> TextContent:
    """Return a text content block."""
    block: dict[str, Any] = {"type": "text", "text": value}
    _decorate(block, annotations, meta)
    return cast("TextContent", block)


def image(
    data: bytes | str,
    mime_type: str,
    *,
    annotations: Annotations | None = None,
    meta: Mapping[str, Any] | None = None,
) -> ImageContent:
    """Return an image content block.

    Args:
        data: the image bytes, or a string already base64-encoded.
        mime_type: e.g. `"image/png"`.
    """
    block: dict[str, Any] = {"type": "image", "data": _b64(data), "mimeType": mime_type}
    _decorate(block, annotations, meta)
    return cast("ImageContent", block)


def audio(
    data: bytes | str,
    mime_type: str,
    *,
    annotations: Annotations | None = None,
    meta: Mapping[str, Any] | None = None,
) -> AudioContent:
    """Return an audio content block.

    Args:
        data: the audio bytes, or a string already base64-encoded.
        mime_type: e.g. `"audio/wav"`.
    """
    block: dict[str, Any] = {"type": "audio", "data": _b64(data), "mimeType": mime_type}
    _decorate(block, annotations, meta)
    return cast("AudioContent", block)


def resource_contents(
    uri: str,
    *,
    text: str | None = None,
    blob: bytes | str | None = None,
    mime_type: str | None = None,
    meta: Mapping[str, Any] | None = None,
) -> ResourceContents:
    """Return the contents of a resource: text, or a binary blob (exactly one of them).

    Resource functions may return a list of these to answer one read with several contents.
    """
    if (text is None) == (blob is None):
        raise TypeError("resource contents need exactly one of text= or blob=")
    contents: dict[str, Any] = {"uri": uri}
    if mime_type is not None:
        contents["mimeType"] = mime_type
    if text is not None:
        contents["text"] = text
    else:
        assert blob is not None
        contents["blob"] = _b64(blob)
    if meta:
        contents["_meta"] = dict(meta)
    return cast("ResourceContents", contents)


def embedded_resource(
    uri: str,
    *,
    text: str | None = None,
    blob: bytes | str | None = None,
    mime_type: str | None = None,
    annotations: Annotations | None = None,
    meta: Mapping[str, Any] | None = None,
) -> EmbeddedResource:
    """Return a `resource` content block embedding a resource's text or blob (exactly one of them)."""
    block: dict[str, Any] = {
        "type": "resource",
        "resource": resource_contents(uri, text=text, blob=blob, mime_type=mime_type),
    }
    _decorate(block, annotations, meta)
    return cast("EmbeddedResource", block)


def resource_link(
    uri: str,
    name: str,
    *,
    title: str | None = None,
    description: str | None = None,
    mime_type: str | None = None,
    size: int | None = None,
    annotations: Annotations | None = None,
    meta: Mapping[str, Any] | None = None,
) -> ResourceLink:
    """Return a `resource_link` content block pointing at a resource the client can read."""
    block: dict[str, Any] = {"type": "resource_link", "uri": uri, "name": name}
    for key, value in (("title", title), ("description", description), ("mimeType", mime_type), ("size", size)):
        if value is not None:
            block[key] = value
    _decorate(block, annotations, meta)
    return cast("ResourceLink", block)


def _as_block(item: str | Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(item, str):
        return dict(text(item))
    return dict(item)


def user_message(content: str | ContentBlock) -> PromptMessage:
    """Return a prompt message from the user; a string becomes a text block."""
    return cast("PromptMessage", {"role": "user", "content": _as_block(content)})


def assistant_message(content: str | ContentBlock) -> PromptMessage:
    """Return a prompt message from the assistant; a string becomes a text block."""
    return cast("PromptMessage", {"role": "assistant", "content": _as_block(content)})


def tool_result(
    content: str | ContentBlock | Iterable[str | ContentBlock] = (),
    *,
    structured: Any = None,
    is_error: bool = False,
    meta: Mapping[str, Any] | None = None,
) -> ToolResult:
    """Return a complete `CallToolResult`, sent to the client exactly as built.

    Args:
        content: a block, a string (a text block) or a sequence of them.
        structured: the `structuredContent`, when the tool has one.
        is_error: mark the result as a tool execution error the model should see.
        meta: the result's `_meta`.
    """
    items: Sequence[str | Mapping[str, Any]]
    items = [content] if isinstance(content, str | Mapping) else list(content)
    result = ToolResult(content=[_as_block(item) for item in items])
    if structured is not None:
        result["structuredContent"] = structured
    if is_error:
        result["isError"] = True
    if meta:
        result["_meta"] = dict(meta)
    return result


def error(message: str) -> ToolResult:
    """Return an `isError` tool result whose only block is `message`.

    Raising `mcp_django.ToolError(message)` from a tool does the same.
    """
    return ToolResult(tool_error(message))
