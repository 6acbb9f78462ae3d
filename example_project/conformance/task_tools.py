"""The conformance suite's fixtures for the tasks extension (SEP-2663), on the fixture server's registry.

Names, arguments and behaviour are the suite's contract (the `tasks-*` scenarios of
@modelcontextprotocol/conformance 0.2.0-alpha.12): `greet` runs inline; the others run as tasks of
Django's task framework for clients that declare `io.modelcontextprotocol/tasks` (docs/tasks.md).
"""

from __future__ import annotations

import asyncio
from typing import Any

import mcp_django
from mcp_django import Context, ToolError
from mcp_django.exceptions import InternalError

CONFIRM_SCHEMA = {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}
NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def _elicit(message: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"method": "elicitation/create", "params": {"message": message, "requestedSchema": schema}}


def register(registry: mcp_django.Registry) -> None:
    """Declare the task fixtures on `registry`."""

    @registry.tool
    def greet(name: str) -> str:
        """Greets someone; never a task"""
        return f"Hello, {name}!"

    @registry.tool(task="optional")
    async def slow_compute(seconds: float = 1, label: str = "") -> str:
        """Sleeps `seconds` seconds, then answers; a task for clients that take tasks

        Args:
            seconds: how long to work.
            label: echoed in the answer.
        """
        await asyncio.sleep(max(0.0, seconds))
        return f"Computed {label or 'result'} in {seconds:g} s"

    @registry.tool(task="required")
    async def failing_job() -> str:
        """Fails with a tool execution error after about a second; runs only as a task"""
        await asyncio.sleep(1)
        raise ToolError("failing_job failed, as it always does")

    @registry.tool(task="optional")
    async def protocol_error_job() -> str:
        """Fails with a protocol error (the task ends failed)"""
        raise InternalError("protocol_error_job broke, as it always does")

    @registry.tool(task="optional")
    async def confirm_delete(filename: str, ctx: Context) -> str:
        """Asks the user to confirm, then pretends to delete the file

        Args:
            filename: the file to delete.
        """
        answer = await ctx.elicit(f"Delete {filename}?", CONFIRM_SCHEMA)
        confirmed = answer.get("action") == "accept" and (answer.get("content") or {}).get("confirm")
        return f"Deleted {filename}" if confirmed else f"Kept {filename}"

    @registry.tool(task="optional")
    async def multi_input(ctx: Context) -> str:
        """Asks two questions at once"""
        answers = await ctx.request_input(
            {"name": _elicit("Your name?", NAME_SCHEMA), "confirm": _elicit("Go ahead?", CONFIRM_SCHEMA)}
        )
        return f"Got {len(answers)} answers"

    @registry.tool(task="required", task_inputs={"user_name": _elicit("What is your name?", NAME_SCHEMA)})
    async def test_tool_with_task(ctx: Context) -> str:
        """Asks for a name in the request, then runs as a task that greets it"""
        answer = await ctx.elicit("What is your name?", NAME_SCHEMA, key="user_name")
        return f"Hello from the task, {(answer.get('content') or {}).get('name', 'stranger')}!"
