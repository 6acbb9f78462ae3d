"""`completion/complete`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp_django.protocol.context import RequestContext
from mcp_django.protocol.features.base import MethodSpec, Server


async def complete(server: Server, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]:
    context_arguments = (params.get("context") or {}).get("arguments") or {}
    completion = dict(await server.backend.complete(params["ref"], params["argument"], context_arguments, ctx))
    values = list(completion.get("values", ()))
    if len(values) > 100:
        # The spec caps a completion at 100 values; say there is more rather than fail.
        completion.update(values=values[:100], hasMore=True, total=completion.get("total", len(values)))
    return {"completion": completion}


COMPLETION_METHODS = (MethodSpec("completion/complete", complete, feature="completions"),)
