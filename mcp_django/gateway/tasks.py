"""A remote server's tasks (`io.modelcontextprotocol/tasks`, SEP-2663) served through a gateway or a hub.

A remote tool that runs as a task answers `tools/call` with a `CreateTaskResult`; the caller then polls
`tasks/get`, answers `tasks/update` and may `tasks/cancel`. Through an endpoint of this package:

- the caller's declaration of the extension goes along to a remote that advertises it
  (`forwarding.passed_extensions`), so the remote decides as it would for the caller itself;
- the caller gets a handle for the remote's task id (`task_handles`), so `tasks/*` reach the server the
  task lives on (a hub has several), and only for the caller who started it;
- the tasks extension (`mcp_django.tasks`) is served where some remote server advertises it, in the
  stateless era only, and asks each remote source (`RemoteTasks`, a part of `RemoteSource`) for a
  handle before its own tasks: the source that gave the handle out forwards the request.

docs/federation.md, "Tasks through a gateway".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from mcp_django.client.config import ServerConfig
from mcp_django.gateway.forwarding import local_result
from mcp_django.gateway.task_handles import outer_task, remote_task
from mcp_django.protocol.context import RequestContext
from mcp_django.protocol.jsonrpc import InvalidParams
from mcp_django.tasks.methods import EXTENSION


def switched_on(ctx: RequestContext, server: str) -> bool:
    """Whether the admin leaves the remote server `server` on for the endpoint serving `ctx` (no admin: on)."""
    state = getattr(getattr(ctx.endpoint, "overlay", None), "state", None)
    return state is None or bool(state.remote_enabled(server))


class _Remote(Protocol):
    """What `RemoteTasks` needs of the source it is part of."""

    name: str

    @property
    def remote(self) -> ServerConfig: ...

    def description(self) -> Any: ...

    async def forward(self, method: str, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]: ...


class RemoteTasks:
    """A remote source's tasks (`tasks.methods.TaskSource`): those its server started for a caller, by handle."""

    __slots__ = ()

    def hands_out_tasks(self: _Remote) -> bool:
        """Whether the remote server advertised the tasks extension (so its tools may answer with tasks)."""
        described = self.description()
        return described is not None and EXTENSION in described.extensions

    async def answer_task(
        self: _Remote, method: str, params: Mapping[str, Any], ctx: RequestContext
    ) -> dict[str, Any] | None:
        """`tasks/get`, `/update` or `/cancel` for a handle this source gave out this caller, sent to the task's
        server; None for any other task id (another source's, a local task's, a forged one)."""
        try:
            name, task_id = remote_task(params.get("taskId"), ctx)
        except InvalidParams:
            return None
        if name != self.remote.name or not switched_on(ctx, self.name):
            return None  # a server switched off in the admin answers nothing, its old handles included
        result = await self.forward(method, {**params, "taskId": task_id}, ctx)
        return outer_task(local_result(result, task=True), name, ctx)
