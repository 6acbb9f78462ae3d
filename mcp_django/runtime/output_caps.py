"""How much of a tool's result reaches the model: the tool's own `max_output_chars`, else its endpoint's
`tool_output_max_chars`, else `TOOL_OUTPUT_MAX_CHARS` (None: no cap).

A result's size is the characters of its content as the model reads them: each text block's text, each
other block (an image, a resource) as JSON, and `structuredContent` as JSON. Over the cap, the endpoint's
`tool_output_overflow` (else `TOOL_OUTPUT_OVERFLOW`) decides:

- `"truncate"`: the text blocks are cut where the cap falls, the blocks after it dropped, and a marker the
  model reads ends the text (`[Truncated by the server: ...]`); `_meta["mcp-django.dev/truncated"]` says
  how much was shown of how much;
- `"refuse"`: the result is replaced by an `isError` result saying how large it was and what to do.

A result with `structuredContent` over the cap is refused either way: cut JSON is no longer the data its
output schema promises. The same caps apply to local and remote tools (`sources.composite` applies them
to whatever the tool found answered).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final, Literal

from mcp_django.protocol.context import RequestContext
from mcp_django.runtime.package_settings import package_settings

Overflow = Literal["truncate", "refuse"]
OVERFLOWS: Final[tuple[Overflow, ...]] = ("truncate", "refuse")
TRUNCATED: Final = "mcp-django.dev/truncated"
"""The result `_meta` member of a truncated result: `{"shownChars": ..., "totalChars": ...}`."""


def tool_output_cap(component: Any, ctx: RequestContext) -> tuple[int | None, Overflow]:
    """The most characters a call of `component` may return through `ctx`'s endpoint (None: no cap), and what
    happens past it."""
    mcp_settings = package_settings()
    cap = getattr(component, "max_output_chars", None)
    if cap is None:
        cap = getattr(ctx.endpoint, "tool_output_max_chars", None)
    if cap is None:
        cap = mcp_settings.TOOL_OUTPUT_MAX_CHARS
    overflow = getattr(ctx.endpoint, "tool_output_overflow", None) or mcp_settings.TOOL_OUTPUT_OVERFLOW
    return cap, overflow


def capped(component: Any, name: str, result: Mapping[str, Any], ctx: RequestContext) -> Mapping[str, Any]:
    """`result` within its cap: itself when it fits (or has no content: a task), else cut or refused."""
    cap, overflow = tool_output_cap(component, ctx)
    if cap is None or not isinstance(result.get("content"), list):
        return result
    blocks: list[Any] = result["content"]
    sizes = [_size(block) for block in blocks]
    structured = result.get("structuredContent")
    total = sum(sizes) + (0 if structured is None else len(_json(structured)))
    if total <= cap:
        return result
    if overflow == "refuse" or structured is not None:
        return _refusal(name, total, cap)
    kept: list[Any] = []
    left = cap
    for block, size in zip(blocks, sizes, strict=True):
        if size <= left:
            kept.append(block)
            left -= size
        elif _is_text(block) and left > 0:
            kept.append({**block, "text": block["text"][:left]})
            left = 0
        else:
            break
    shown = cap - left
    marker = (
        f"\n\n[Truncated by the server: {shown:,} of {total:,} characters shown. "
        "Ask for less: a narrower query, a smaller page, fewer fields.]"
    )
    if kept and _is_text(kept[-1]):
        kept[-1] = {**kept[-1], "text": kept[-1]["text"] + marker}
    else:
        kept.append({"type": "text", "text": marker.lstrip()})
    meta = {**(result.get("_meta") or {}), TRUNCATED: {"shownChars": shown, "totalChars": total}}
    return {**result, "content": kept, "_meta": meta}


def _refusal(name: str, total: int, cap: int) -> dict[str, Any]:
    text = (
        f"The result of tool {name} is {total:,} characters, over this server's limit of {cap:,}. "
        "Ask for less: a narrower query, a smaller page, fewer fields."
    )
    return {"content": [{"type": "text", "text": text}], "isError": True}


def _is_text(block: Any) -> bool:
    return isinstance(block, Mapping) and block.get("type") == "text" and isinstance(block.get("text"), str)


def _size(block: Any) -> int:
    return len(block["text"]) if _is_text(block) else len(_json(block))


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)
