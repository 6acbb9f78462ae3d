"""What the benchmark project serves: echo tools (async and sync), an ORM read, no-op interceptors, 10,000 tools."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from mcp_django import Registry
from mcp_django.context import Context
from mcp_django.interceptors import (
    Invocation,
    MutationInterceptor,
    MutationResult,
    SinkInterceptor,
    ValidationInterceptor,
)
from mcp_django.providers import ToolProvider

registry = Registry("benchmark")


@registry.tool
async def echo(text: str) -> str:
    """Return the text."""
    return text


@registry.tool
def echo_sync(text: str) -> str:
    """Return the text, from a sync function: how most Django tools are written (run on a database thread)."""
    return text


@registry.tool
def count_users(text: str) -> str:
    """One ORM read, `count()` of a small table (the benchmark's one user): what a Django tool does."""
    from django.contrib.auth import get_user_model

    return f"{text} {get_user_model().objects.count()}"


class NoOpValidation(ValidationInterceptor):
    """Accepts everything."""

    async def validate(self, invocation: Invocation) -> bool:
        return True


class NoOpMutation(MutationInterceptor):
    """Changes nothing."""

    async def mutate(self, invocation: Invocation) -> MutationResult:
        return MutationResult(modified=False, payload=invocation.payload)


class NoOpSink(SinkInterceptor):
    """Records nothing."""

    async def record(self, invocation: Invocation) -> None:
        return None


TEN_NO_OPS: Final = [
    {"CLASS": kind, "NAME": f"{kind.__name__}-{index}"}
    for index, kind in enumerate([NoOpValidation] * 4 + [NoOpMutation] * 3 + [NoOpSink] * 3)
]
"""Four validations, three mutations, three sinks: every phase of the chain runs."""

MANY: Final = 10_000


class ManyTools(ToolProvider):
    """Ten thousand tools, built once: `tools/list` measures the server's paging, not the provider."""

    id = "bench.many"
    name = "Ten thousand tools"

    def __init__(self) -> None:
        self._tools: Sequence[Mapping[str, Any]] = tuple(
            {
                "name": f"tool_{index:05d}",
                "description": f"Benchmark tool number {index}.",
                "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
            }
            for index in range(MANY)
        )

    async def list_tools(self, ctx: Context) -> Sequence[Mapping[str, Any]]:
        return self._tools

    async def call_tool(self, name: str, arguments: dict[str, Any], ctx: Context) -> Any:
        return arguments.get("text", "")
