"""The wire shapes of results the protocol core builds itself: a tool's `isError` result, a capped completion.

`mcp_django.runtime.results` converts Python values to results and builds on these two; they live here so
the Django-free core uses the same code without importing upward.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

MAX_COMPLETION_VALUES: Final = 100
"""`completion/complete` returns at most this many values (the spec's cap)."""


def tool_error(text: str) -> dict[str, Any]:
    """The `CallToolResult` of a tool execution error the model should read: one text block, `isError`."""
    return {"content": [{"type": "text", "text": text}], "isError": True}


def completion(suggestions: Iterable[Any] | None) -> dict[str, Any]:
    """The `completion` member for every suggestion: the first 100 as strings, `total` and `hasMore`."""
    values = [str(item) for item in suggestions or ()]
    return {
        "values": values[:MAX_COMPLETION_VALUES],
        "total": len(values),
        "hasMore": len(values) > MAX_COMPLETION_VALUES,
    }


def capped_completion(member: Mapping[str, Any]) -> dict[str, Any]:
    """A backend's `completion` member held to the cap: over 100 values say there is more rather than fail."""
    capped = dict(member)
    values = list(capped.get("values", ()))
    if len(values) > MAX_COMPLETION_VALUES:
        capped.update(values=values[:MAX_COMPLETION_VALUES], hasMore=True, total=capped.get("total", len(values)))
    return capped
