"""`TasksExtension`: the tasks extension (`io.modelcontextprotocol/tasks`) on the extension seam.

Served on an endpoint whose registry declares a tool with `task=` (elsewhere nothing would ever be a
task, so nothing is advertised): it adds `tasks/get`, `tasks/update` and `tasks/cancel`, and runs those
tools as tasks for clients that declared the extension (`start.start_task`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from mcp_django.extensions import Extension
from mcp_django.protocol.context import RequestContext
from mcp_django.protocol.features.base import MethodSpec
from mcp_django.tasks.methods import EXTENSION, TASK_METHODS

if TYPE_CHECKING:
    from django.core.checks import CheckMessage

    from mcp_django.declarations.tools import Tool


class TaskRunner:
    """Runs a tool declared with `task=` as a task when the client declared the extension (`start.start_task`)."""

    async def run(self, tool: Tool, arguments: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any] | None:
        from mcp_django.tasks.start import start_task  # the models: only once the app registry is ready

        return await start_task(tool, arguments, ctx, support=str(tool.task), inputs=tool.task_inputs)


_RUNNER = TaskRunner()


class TasksExtension(Extension):
    """SEP-2663's tasks, stored as `MCPTask` rows and run by the workers of Django's task framework."""

    identifier = EXTENSION

    def capability(self, endpoint: Any) -> Mapping[str, Any] | None:
        """`{}` where the endpoint's registry declares a task tool; None elsewhere."""
        registry = getattr(endpoint, "registry", None)
        if registry is None or not any(tool.task for tool in registry.tools.values()):
            return None
        return {}

    def methods(self, endpoint: Any) -> Sequence[MethodSpec]:
        return TASK_METHODS

    def tool_runner(self) -> TaskRunner:
        return _RUNNER

    def check(self) -> list[CheckMessage]:
        from mcp_django.tasks.checks import check_tasks

        return check_tasks()
