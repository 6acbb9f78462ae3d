"""The MCP methods, one module per feature; `METHODS` is the table the handler dispatches on."""

from __future__ import annotations

from mcp_django.protocol.features.base import MethodImpl, MethodSpec, Server
from mcp_django.protocol.features.completions import COMPLETION_METHODS
from mcp_django.protocol.features.lifecycle import LIFECYCLE_METHODS
from mcp_django.protocol.features.prompts import PROMPT_METHODS
from mcp_django.protocol.features.resources import RESOURCE_METHODS
from mcp_django.protocol.features.subscriptions import SUBSCRIPTION_METHODS
from mcp_django.protocol.features.tools import TOOL_METHODS

__all__ = ["METHODS", "MethodImpl", "MethodSpec", "Server"]

METHODS: dict[str, MethodSpec] = {
    spec.name: spec
    for spec in (
        *LIFECYCLE_METHODS,
        *TOOL_METHODS,
        *RESOURCE_METHODS,
        *PROMPT_METHODS,
        *COMPLETION_METHODS,
        *SUBSCRIPTION_METHODS,
    )
}
