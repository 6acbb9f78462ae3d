"""`prompts/list` and `prompts/get`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp_django.protocol.context import RequestContext
from mcp_django.protocol.features.base import MethodSpec, Server


async def list_prompts(server: Server, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]:
    return server.page("prompts", await server.backend.list_prompts(ctx), params)


async def get_prompt(server: Server, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]:
    return dict(await server.backend.get_prompt(params["name"], params.get("arguments") or {}, ctx))


PROMPT_METHODS = (
    MethodSpec("prompts/list", list_prompts, feature="prompts", cacheable=True),
    MethodSpec("prompts/get", get_prompt, feature="prompts"),
)
