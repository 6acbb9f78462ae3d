"""`completion/complete`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp_django.protocol.context import RequestContext
from mcp_django.protocol.features.base import MethodSpec, Server
from mcp_django.protocol.results import capped_completion


async def complete(server: Server, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]:
    context_arguments = (params.get("context") or {}).get("arguments") or {}
    completion = await server.backend.complete(params["ref"], params["argument"], context_arguments, ctx)
    return {"completion": capped_completion(completion)}


COMPLETION_METHODS = (MethodSpec("completion/complete", complete, feature="completions"),)
