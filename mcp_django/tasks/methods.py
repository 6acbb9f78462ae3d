"""The tasks extension's methods (`tasks/get`, `tasks/update`, `tasks/cancel`) and its advertisement.

SEP-2663 (`io.modelcontextprotocol/tasks`) serves them in the stateless era only, to clients that
declare the extension (in their per-request `_meta` client capabilities); everyone else gets `-32021`.
`tasks/result` and `tasks/list` of the earlier experimental tasks are gone: they answer `-32601` as any
unknown method does. A task is found only by the principal who started it, on the endpoint it was
started on; for anyone else its id is unknown (`-32602`), exactly as an id that never existed.

Sources may hand out tasks of their own (a gateway's or a hub's remote servers, `TaskSource`): each is
asked for a request's task id first, and the one that gave it out answers; the others are this store's.

The endpoints import this module before Django's settings may be configured (`mcp_stdio`'s stdout guard),
so the models are imported when a method first runs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Final, Protocol, runtime_checkable

from mcp_django.protocol.context import RequestContext
from mcp_django.protocol.features.base import MethodSpec, Server
from mcp_django.protocol.jsonrpc import InvalidParams, MissingClientCapability
from mcp_django.protocol.versions import Era
from mcp_django.runtime.executor import run_sync

if TYPE_CHECKING:
    from mcp_django.tasks.models import MCPTask

EXTENSION: Final = "io.modelcontextprotocol/tasks"
"""The extension's identifier, under `capabilities.extensions` on both sides."""


@runtime_checkable
class TaskSource(Protocol):
    """A source whose tools may answer with tasks it keeps itself (a remote server's, `gateway.tasks.RemoteTasks`)."""

    def hands_out_tasks(self) -> bool:
        """Whether its tools may answer with a task (then the endpoint serves the extension)."""
        ...

    async def answer_task(self, method: str, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any] | None:
        """The answer to `tasks/get`, `/update` or `/cancel` for a task id it gave out; None for any other."""
        ...


def task_sources(endpoint: Any) -> list[TaskSource]:
    """The endpoint's sources that hand out tasks of their own (those it composes: a gateway's remote servers)."""
    sources = getattr(endpoint, "remote_sources", ())
    return [source for source in sources if isinstance(source, TaskSource) and source.hands_out_tasks()]


def served_tools(endpoint: Any) -> dict[str, Any]:
    """The tools the endpoint serves itself, by name: its registry's, then its toolsets' (providers holding
    `Tool`s); those a task can run, and those that may need approval."""
    tools: dict[str, Any] = {}
    try:
        providers = tuple(getattr(endpoint, "providers", ()))
    except LookupError:  # providers= names an unknown id: a check of the endpoints reports it
        providers = ()
    for provider in providers:
        own = getattr(provider, "tools", None)
        if isinstance(own, Mapping):
            tools.update({name: tool for name, tool in own.items() if name not in tools})
    registry = getattr(endpoint, "registry", None)
    return {**tools, **(dict(registry.tools) if registry is not None else {})}


def negotiated(ctx: RequestContext) -> bool:
    """Whether the client declared the tasks extension for this request (stateless era only)."""
    if ctx.era is not Era.STATELESS:
        return False
    extensions = ctx.client_capabilities.get("extensions")
    return isinstance(extensions, Mapping) and EXTENSION in extensions


def require_extension(ctx: RequestContext, what: str) -> None:
    """Raise `-32021` naming the extension unless the client declared it."""
    if not negotiated(ctx):
        raise MissingClientCapability(
            f"{what} needs the client capability extensions['{EXTENSION}']",
            data={"requiredCapabilities": {"extensions": {EXTENSION: {}}}},
        )


async def _task_of(params: Mapping[str, Any], ctx: RequestContext) -> MCPTask:
    require_extension(ctx, ctx.method)
    task_id = params.get("taskId")
    if not isinstance(task_id, str):
        raise InvalidParams("Invalid params: taskId must be a string")
    from mcp_django.tasks import store

    endpoint = getattr(ctx.endpoint, "name", "")
    task = await run_sync(store.find, task_id, user_id=ctx.connection.principal_id, endpoint=endpoint)
    if task is None:
        raise InvalidParams(f"Unknown task: {task_id}")
    if task.backend_task_id == store.AWAITING:  # waiting for an approval, which may have expired meanwhile
        from mcp_django.tasks.expiry import expire_overdue

        if await run_sync(expire_overdue, task_id=task.task_id):
            await run_sync(task.refresh_from_db)
    return task


async def get_task(server: Server, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]:
    """`tasks/get`: the task's `DetailedTask` (its result or error inlined once it has finished)."""
    from mcp_django.tasks import store

    return store.detailed(await _task_of(params, ctx))


async def update_task(server: Server, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]:
    """`tasks/update`: the client's answers to the task's input requests; an empty acknowledgement."""
    task = await _task_of(params, ctx)
    responses = params.get("inputResponses")
    if not isinstance(responses, Mapping):
        raise InvalidParams("Invalid params: inputResponses must be an object")
    from mcp_django.tasks import store

    await run_sync(store.submit_answers, task, responses)
    return {}


async def cancel_task(server: Server, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]:
    """`tasks/cancel`: cancel an active task (a finished one is left as it is); an empty acknowledgement."""
    from mcp_django.tasks import store

    await run_sync(store.cancel, await _task_of(params, ctx))
    return {}


_Method = Callable[[Server, Mapping[str, Any], RequestContext], Awaitable[dict[str, Any]]]


def _owned_first(local: _Method) -> _Method:
    """`local`, after asking the endpoint's task sources whether the task id is one they gave out."""

    async def method(server: Server, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]:
        require_extension(ctx, ctx.method)
        for source in task_sources(ctx.endpoint):
            answer = await source.answer_task(ctx.method, params, ctx)
            if answer is not None:
                return answer
        return await local(server, params, ctx)

    return method


_STATELESS: Final = frozenset({Era.STATELESS})
TASK_METHODS: Final = (
    MethodSpec("tasks/get", _owned_first(get_task), eras=_STATELESS, operation=False),
    MethodSpec("tasks/update", _owned_first(update_task), eras=_STATELESS, operation=False),
    MethodSpec("tasks/cancel", _owned_first(cancel_task), eras=_STATELESS, operation=False),
)
