"""`prompts/list` and `prompts/get`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mcp_django.protocol.context import RequestContext
from mcp_django.protocol.features.base import MethodSpec

if TYPE_CHECKING:
    from mcp_django.protocol.handler import MessageHandler


async def list_prompts(handler: MessageHandler, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]:
    return handler.page("prompts", await handler.backend.list_prompts(ctx), params)


async def get_prompt(handler: MessageHandler, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]:
    return dict(await handler.backend.get_prompt(params["name"], params.get("arguments") or {}, ctx))


PROMPT_METHODS = (
    MethodSpec("prompts/list", list_prompts, feature="prompts", cacheable=True),
    MethodSpec("prompts/get", get_prompt, feature="prompts"),
)
