"""What the telemetry tests serve: a registry of tools, a prompt and a resource, and its endpoint."""

from __future__ import annotations

import asyncio

from opentelemetry import trace

from mcp_django import Context
from mcp_django.endpoints import Endpoint
from mcp_django.registry import Registry
from mcp_django.telemetry import TelemetryExtension

traced = Registry("telemetry-tests")
tracer = trace.get_tracer("tests.telemetry")


@traced.tool
def lookup(name: str) -> str:
    """Look a user up in the database, inside a span of its own (sync: it runs on a database thread)."""
    from django.contrib.auth.models import User

    with tracer.start_as_current_span("lookup query"):
        return f"{name}: {User.objects.filter(username=name).count()}"


@traced.tool
async def echo(text: str) -> str:
    """Echo the text."""
    with tracer.start_as_current_span("echo inner"):
        return text


@traced.tool
def fails() -> str:
    """Fail, as a tool does when its code raises."""
    raise ValueError("no such thing")


started: dict[str, asyncio.Event] = {}
"""`started["sleeps"]`, set by a test before it calls `sleeps`, is set once the tool is running."""


@traced.tool
async def sleeps() -> str:
    """Sleep for a long time (cancelled by the tests)."""
    started["sleeps"].set()
    await asyncio.sleep(30)
    return "woke"


@traced.tool
async def asks(ctx: Context) -> str:
    """Ask the user's name (an elicitation), then greet them."""
    answer = await ctx.elicit("Your name?", {"type": "object", "properties": {"name": {"type": "string"}}})
    return f"Hello {answer['content']['name']}"


@traced.prompt
def greet(who: str) -> str:
    """Greet someone."""
    return f"Hello {who}"


@traced.resource("notes://today", name="today")
def today() -> str:
    """Today's note."""
    return "nothing"


def endpoint(**options: object) -> Endpoint:
    """An endpoint serving the registry with the telemetry extension."""
    return Endpoint(
        "otel/mcp",
        name="otel",
        mode="server",
        registry=traced,
        allow_anonymous=True,
        extensions=[TelemetryExtension()],
        **options,  # type: ignore[arg-type]
    )
