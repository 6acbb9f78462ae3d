"""The handles callers of a gateway or hub see for a remote server's tasks (`gateway.tasks`).

A remote server knows one caller, the endpoint in front of it, so its task ids cannot tell that
endpoint's callers apart. The handle is the remote's id signed together with the remote server's name,
the endpoint's and the caller's principal (`django.core.signing`, salted for this use, without a
timestamp: one task keeps one handle, which callers compare). Only the caller who started the task, on
the endpoint that gave the handle out, gets it back; for anyone else a handle is an unknown task.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from django.core import signing

from mcp_django.protocol.context import RequestContext
from mcp_django.protocol.jsonrpc import InvalidParams

_SALT: Final = "mcp_django.gateway.task"


def _bound_to(ctx: RequestContext) -> list[Any]:
    principal = ctx.connection.principal_id
    return [getattr(ctx.endpoint, "name", ""), None if principal is None else str(principal)]


def outer_task(result: Mapping[str, Any], server: str, ctx: RequestContext) -> dict[str, Any]:
    """A remote `CreateTaskResult` or `DetailedTask` with its `taskId` made this caller's handle."""
    out = dict(result)
    if isinstance(out.get("taskId"), str):
        out["taskId"] = signing.Signer(salt=_SALT).sign_object([server, *_bound_to(ctx), out["taskId"]], compress=True)
    return out


def remote_task(handle: Any, ctx: RequestContext) -> tuple[str, str]:
    """The remote server's name and its task id for `handle`, given out to this caller on this endpoint.

    Raises:
        InvalidParams: not a string, forged, altered, or another caller's or endpoint's (`Unknown task`).
    """
    if not isinstance(handle, str):
        raise InvalidParams("Invalid params: taskId must be a string")
    try:
        server, endpoint, principal, task_id = signing.Signer(salt=_SALT).unsign_object(handle)
    except (signing.BadSignature, ValueError, TypeError):
        raise InvalidParams(f"Unknown task: {handle}") from None
    if [endpoint, principal] != _bound_to(ctx) or not isinstance(server, str) or not isinstance(task_id, str):
        raise InvalidParams(f"Unknown task: {handle}")
    return server, task_id
