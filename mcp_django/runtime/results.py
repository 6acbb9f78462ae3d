"""Every conversion of what user code returns (or raises) into an MCP result.

Declarations (`@tool`, `@resource`, `@prompt`, `@completion`), providers and the core all go
through here, so a value means the same thing wherever it comes from:

- a tool's return value → `content` (and `structuredContent`), its failure → an `isError` result;
- a resource's return value → `ReadResourceResult.contents`;
- a prompt's return value → `GetPromptResult.messages`;
- completion suggestions → the `completion` member, capped at 100 values.

Nothing here imports Django. The two shapes the protocol core builds itself (`tool_error`,
`completion`) live in `mcp_django.protocol.results`.
"""

from __future__ import annotations

import contextlib
import logging
import re
import sys
from collections.abc import Iterator, Mapping
from typing import Any, Final, Protocol

from mcp_django import content
from mcp_django.exceptions import ToolError
from mcp_django.protocol.jsonrpc import InternalError, InvalidParams, MCPError
from mcp_django.protocol.results import tool_error

_MARKUP: Final = re.compile(r"</?[A-Za-z][^<>]*>")  # an HTML tag a project's validation message may carry


def to_json(value: Any) -> str:
    """`value` as JSON text; what JSON cannot say becomes its `str()`."""
    import pydantic_core  # on first use: a management command does not load pydantic (issue 34)

    return pydantic_core.to_json(value, fallback=str).decode()


def is_model(value: Any) -> bool:
    """Whether `value` is a pydantic model; none is before `pydantic.main` loads, which this never imports."""
    main = sys.modules.get("pydantic.main")
    return main is not None and isinstance(value, main.BaseModel)


def plain(value: Any) -> Any:
    """Accept either a TypedDict-shaped dict or an `mcp_types` model for wire metadata."""
    if is_model(value):
        return value.model_dump(by_alias=True, exclude_none=True, mode="json")
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    return value


# ---------------------------------------------------------------- tools


class StructuredDump(Protocol):
    """How a tool's return value becomes `structuredContent` (`declarations.signatures.StructuredOutput`)."""

    @property
    def wrap(self) -> bool:
        """True when the value is sent as `{"result": value}` (its type is not an object)."""
        ...

    def dump(self, value: Any) -> Any:
        """Validate the value against the declared return type and return its JSON-ready form."""
        ...


def is_call_tool_result(value: Any) -> bool:
    """True for a plain dict shaped like a `CallToolResult` (or an `input_required` result, or a task's
    `CreateTaskResult`: a toolset's tool that runs as a task or waits for an approval)."""
    if not isinstance(value, Mapping):
        return False
    if value.get("resultType") in ("input_required", "task"):
        return True
    return isinstance(value.get("content"), list) and set(value) <= {"content", "structuredContent", "isError", "_meta"}


def is_failure(value: Any) -> bool:
    """True for a tool's return value that says it failed: a result marked `isError`."""
    return isinstance(value, Mapping) and value.get("isError") is True


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
    if is_model(value):
        return [{"type": "text", "text": value.model_dump_json(by_alias=True)}]
    return [{"type": "text", "text": to_json(value)}]


def tool_result(
    value: Any, tool_name: str, *, output: StructuredDump | None = None, verbatim_output: bool = False
) -> dict[str, Any]:
    """Convert a tool's return value into its `CallToolResult`.

    Args:
        value: what the tool returned. A `content.ToolResult` is sent as built; so is a dict shaped
            like a `CallToolResult`, unless the tool has structured output.
        tool_name: names the embedded resource that carries a bytes result.
        output: the tool's structured output, derived from its return annotation.
        verbatim_output: the tool publishes an output schema of its own; the value is the
            `structuredContent` as is, and its JSON the text.
    """
    if isinstance(value, content.ToolResult) or (output is None and is_call_tool_result(value)):
        return dict(value)
    if verbatim_output:
        return {"content": [{"type": "text", "text": to_json(value)}], "structuredContent": value}
    if output is None:
        return {"content": to_content(value, tool_name)}
    structured = output.dump(value)
    shown = structured["result"] if output.wrap else structured
    text = shown if isinstance(shown, str) else to_json(shown)
    return {"content": [{"type": "text", "text": text}], "structuredContent": structured}


def tool_failure(tool_name: str, error: Exception, logger: logging.Logger, where: str) -> dict[str, Any]:
    """The `isError` result of a tool that raised: a `ToolError`'s message and a validation error's messages as
    they are (`readable_error`), anything else prefixed and logged with its traceback.

    Args:
        where: how the log names the tool (`"Tool %s"`-style text already filled in).
    """
    readable = readable_error(error)
    if readable is not None:
        return tool_error(readable)
    logger.exception("%s raised", where)
    if _is_database_error(error):  # its text may carry SQL and the schema: the log has it, the caller not
        return tool_error(f"Error executing tool {tool_name}: the database could not run it")
    return tool_error(f"Error executing tool {tool_name}: {error}")


def readable_error(error: Exception) -> str | None:
    """The text of a failure the model is meant to read and act on; None for any other (a bug, to be logged).

    A `ToolError`'s message, or the messages of a validation error Django (`ValidationError`, a model's
    `full_clean()`, a form's) or DRF (`serializers.ValidationError`) raised, as one line without markup:
    `"title: This field cannot be blank.; year: Enter a whole number."`.
    """
    if isinstance(error, ToolError):
        return str(error)
    django = sys.modules.get("django.core.exceptions")  # never imported here: loaded if Django raised it
    if django is not None and isinstance(error, django.ValidationError):
        messages = error.message_dict if hasattr(error, "error_dict") else error.messages
        return _MARKUP.sub("", describe_errors(messages))
    drf = sys.modules.get("rest_framework.exceptions")
    if drf is not None and isinstance(error, drf.ValidationError):
        return _MARKUP.sub("", describe_errors(error.detail))
    return None


@contextlib.contextmanager
def component_errors(logger: logging.Logger, what: str, *args: Any) -> Iterator[None]:
    """`protocol.errors.internal_errors` for a prompt's or resource's code, which has no `isError` result: a
    failure the model can read (`readable_error`) is an `InvalidParams` error with that text, unlogged."""
    try:
        yield
    except MCPError:
        raise
    except Exception as error:
        readable = readable_error(error)
        if readable is None:
            logger.exception(what, *args)
            raise InternalError() from None
        raise InvalidParams(readable) from None


def describe_errors(errors: Any, prefix: str = "") -> str:
    """Form or serializer errors as one line: `"title: This field is required.; year: Enter a whole number."`."""
    if isinstance(errors, Mapping):
        parts = []
        for key, value in errors.items():
            name = "" if key in ("__all__", "non_field_errors", "detail") else str(key)
            path = f"{prefix}.{name}" if prefix and name else (name or prefix)
            parts.append(describe_errors(value, path))
        return "; ".join(part for part in parts if part)
    if isinstance(errors, (list, tuple)):
        texts = [describe_errors(item, prefix) for item in errors]
        if all(not isinstance(item, (Mapping, list, tuple)) for item in errors) and prefix:
            return f"{prefix}: {' '.join(str(item) for item in errors)}"
        return "; ".join(text for text in texts if text)
    return f"{prefix}: {errors}" if prefix else str(errors)


def _is_database_error(error: Exception) -> bool:
    database = sys.modules.get("django.db")  # loaded whenever a database was used; importing it here would load Django
    return database is not None and isinstance(error, database.DatabaseError)


# ---------------------------------------------------------------- resources


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
    elif is_model(value):
        contents = dict(content.resource_contents(uri, text=value.model_dump_json(by_alias=True), mime_type=mime_type))
    else:
        contents = dict(content.resource_contents(uri, text=to_json(value), mime_type=mime_type))
    return [contents]


def is_read_resource_result(value: Any) -> bool:
    """True for a dict that already is a `ReadResourceResult` (a `contents` list)."""
    return isinstance(value, Mapping) and isinstance(value.get("contents"), list)


def read_result(value: Any, uri: str, mime_type: str | None) -> dict[str, Any]:
    """The `ReadResourceResult` of a resource's return value (see `resource_contents`)."""
    return {"contents": resource_contents(value, uri, mime_type)}


# ---------------------------------------------------------------- prompts


def prompt_message(item: Any) -> dict[str, Any]:
    """One prompt message: a string is a user text message, a content block a user message, a message as is.

    Raises:
        TypeError: `item` is none of those.
    """
    if isinstance(item, str):
        return dict(content.user_message(item))
    if isinstance(item, Mapping):
        if "role" in item:
            return dict(item)
        if item.get("type") in content.CONTENT_TYPES:
            return {"role": "user", "content": dict(item)}
    if is_model(item):
        return prompt_message(plain(item))
    raise TypeError(f"a prompt message must be a string, a message dict or a content block, not {type(item).__name__}")


def prompt_result(value: Any, description: str | None) -> dict[str, Any]:
    """The `GetPromptResult` of a prompt's return value, with `description` unless the value has its own.

    A dict with `messages` is the result itself; a list or tuple is one message per item;
    anything else is one message (see `prompt_message`).
    """
    if isinstance(value, Mapping) and "messages" in value:
        result = dict(value)
    else:
        items = value if isinstance(value, list | tuple) else [value]
        result = {"messages": [prompt_message(item) for item in items]}
    if description and "description" not in result:
        result = {"description": description, **result}
    return result
