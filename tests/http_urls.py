"""A URLconf for the HTTP transport tests: a small registry of their own on two endpoints.

`/mcp` serves `registry`; `/other/mcp` serves the same registry under another name, so a session
opened on one is unknown on the other; `/stateless/mcp` never opens sessions.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from mcp_django import Context, Registry, Scope
from mcp_django.urls import endpoint

registry = Registry("tests")


@registry.tool
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@registry.tool
async def count(ctx: Context, steps: int = 3) -> str:
    """Report progress `steps` times, log once, then finish."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps)
    await ctx.info("counted")
    return f"counted to {steps}"


@registry.tool
def locate(
    region: Annotated[str | None, Field(json_schema_extra={"x-mcp-header": "Region"})] = None,
    zone: Annotated[int, Field(json_schema_extra={"x-mcp-header": "Zone"})] = 0,
    verbose: Annotated[bool, Field(json_schema_extra={"x-mcp-header": "Verbose"})] = False,
) -> str:
    """Echo arguments that clients mirror into Mcp-Param-* headers."""
    return f"{region}/{zone}/{verbose}"


@registry.tool
async def reconnect(ctx: Context) -> str:
    """Log, ask the client to reconnect, log again, then finish (SEP-1699 polling)."""
    await ctx.info("before")
    await ctx.close_stream()
    await ctx.info("after")
    return "reconnected"


@registry.resource("test://greeting", name="greeting", mime_type="text/plain")
def greeting() -> str:
    """A fixed greeting."""
    return "hello"


@registry.resource("test://secret", name="secret", mime_type="text/plain", scope=Scope.SYSTEM)
def secret() -> str:
    """Only SYSTEM callers may read this (anonymous callers are USER)."""
    return "classified"


@registry.prompt
def review(code: str) -> str:
    """Ask for a review of some code."""
    return f"Please review:\n{code}"


urlpatterns = [
    *endpoint("mcp", registry=registry, name="tests", allow_anonymous=True),
    *endpoint("other/mcp", registry=registry, name="other", allow_anonymous=True),
    *endpoint(
        "stateless/mcp", registry="tests.http_urls.registry", name="no-sessions", sessions=False, allow_anonymous=True
    ),
]
