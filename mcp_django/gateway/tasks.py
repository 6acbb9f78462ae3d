"""A remote server's tasks (`io.modelcontextprotocol/tasks`, SEP-2663) served through a gateway or a hub.

A remote tool that runs as a task answers `tools/call` with a `CreateTaskResult`; the caller then polls
`tasks/get`, answers `tasks/update` and may `tasks/cancel`. Through an endpoint of this package:

- the caller's declaration of the extension goes along to a remote that advertises it
  (`forwarding.passed_extensions`), so the remote decides as it would for the caller itself;
- the caller gets a handle for the remote's task id (`task_handles`), so `tasks/*` reach the server the
  task lives on (a hub has several), and only for the caller who started it;
- the extension is served where some remote server advertises it, in the stateless era only, and only
  on an endpoint that runs no task tools of its own (there the local tasks extension answers `tasks/*`).

docs/federation.md, "Tasks through a gateway".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from mcp_django.extensions import Extension
from mcp_django.gateway.forwarding import local_result
from mcp_django.gateway.task_handles import outer_task, remote_task
from mcp_django.protocol.context import RequestContext
from mcp_django.protocol.features.base import MethodSpec, Server
from mcp_django.protocol.jsonrpc import InvalidParams
from mcp_django.protocol.versions import Era
from mcp_django.tasks.methods import EXTENSION, require_extension

if TYPE_CHECKING:
    from mcp_django.gateway.source import RemoteSource

_STATELESS: Final = frozenset({Era.STATELESS})


class RemoteTasksExtension(Extension):
    """The tasks of the remote servers behind a gateway or a hub: `tasks/get`, `/update`, `/cancel` forwarded."""

    identifier = EXTENSION

    def capability(self, endpoint: Any) -> Mapping[str, Any] | None:
        """`{}` where a remote server advertised the extension and no local tool runs as a task; else None."""
        registry = getattr(endpoint, "registry", None)
        if registry is not None and any(tool.task for tool in registry.tools.values()):
            return None  # the local tasks extension serves this endpoint's tasks/*
        sources: Sequence[RemoteSource] = getattr(endpoint, "remote_sources", ())
        described = (source.description() for source in sources)
        return {} if any(d is not None and EXTENSION in d.extensions for d in described) else None

    def methods(self, endpoint: Any) -> Sequence[MethodSpec]:
        return _METHODS


async def _forwarded(server: Server, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]:
    """One `tasks/*` request, sent to the remote server its handle names, for the caller who started the task."""
    require_extension(ctx, ctx.method)
    name, task_id = remote_task(params.get("taskId"), ctx)
    source = next((s for s in getattr(ctx.endpoint, "remote_sources", ()) if s.remote.name == name), None)
    if source is None:
        raise InvalidParams(f"Unknown task: {params.get('taskId')}")
    result = await source.forward(ctx.method, {**params, "taskId": task_id}, ctx)
    return outer_task(local_result(result, task=True), name, ctx)


_METHODS: Final = tuple(
    MethodSpec(method, _forwarded, eras=_STATELESS, operation=False)
    for method in ("tasks/get", "tasks/update", "tasks/cancel")
)
