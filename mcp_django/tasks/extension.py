"""`TasksExtension`: the tasks extension (`io.modelcontextprotocol/tasks`) on the extension seam.

Served on an endpoint serving a tool declared with `task=` or one that needs approval, or one of whose sources hands out
tasks of its own (a gateway's remote server that advertised the extension, `methods.TaskSource`);
elsewhere nothing would ever be a task, so nothing is advertised. It adds `tasks/get`, `tasks/update`
and `tasks/cancel` (a source's task ids to the source, the others to the `MCPTask` rows), and runs the
registry's task tools as tasks for clients that declared the extension (`start.start_task`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from mcp_django.extensions import Extension
from mcp_django.protocol.context import RequestContext
from mcp_django.protocol.features.base import MethodSpec
from mcp_django.tasks.methods import EXTENSION, TASK_METHODS, served_tools, task_sources

if TYPE_CHECKING:
    from django.core.checks import CheckMessage

    from mcp_django.declarations.tools import Tool


class TaskRunner:
    """Runs a tool declared with `task=` as a task when the client declared the extension (`start.start_task`),
    and answers a call that needs approval with a task awaiting it (`approvals.request_approval`)."""

    async def run(self, tool: Tool, arguments: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any] | None:
        # the models: only once the app registry is ready
        from mcp_django.tasks.approvals import request_approval, rule_for
        from mcp_django.tasks.start import TASK_RUN, start_task

        if TASK_RUN in ctx.connection.extra:
            return None  # the task's own run, in the worker (an approved one: `approvals.claim_run` let it)
        rule = rule_for(tool)
        if rule is not None:
            return await request_approval(tool, rule, arguments, ctx)
        if tool.task is None:
            return None
        return await start_task(tool, arguments, ctx, support=str(tool.task), inputs=tool.task_inputs)


_RUNNER = TaskRunner()


def _gated(tool: Tool) -> bool:
    from mcp_django.tasks.conf import tasks_settings

    return tool.approval is not None or (bool(tasks_settings.DESTRUCTIVE_TOOLS_APPROVAL) and tool.destructive)


class TasksExtension(Extension):
    """SEP-2663's tasks, stored as `MCPTask` rows and run by the workers of Django's task framework."""

    identifier = EXTENSION

    def capability(self, endpoint: Any) -> Mapping[str, Any] | None:
        """`{}` where the endpoint's registry declares a task tool or a source hands out tasks; None elsewhere."""
        if any(tool.task or _gated(tool) for tool in served_tools(endpoint).values()):
            return {}
        return {} if task_sources(endpoint) else None

    def methods(self, endpoint: Any) -> Sequence[MethodSpec]:
        return TASK_METHODS

    def tool_runner(self) -> TaskRunner:
        return _RUNNER

    def check(self) -> list[CheckMessage]:
        from mcp_django.tasks.checks import check_tasks

        return check_tasks()
