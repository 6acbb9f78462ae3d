"""The handles callers of a gateway or hub see for a remote server's tasks (`gateway.tasks`).

A remote server knows one caller, the endpoint in front of it, so its task ids cannot tell that
endpoint's callers apart. The handle is the remote's id together with the remote server's name, the
endpoint's and the caller's principal, sealed: encrypted and authenticated with AES-SIV under a key
derived from `SECRET_KEY` (those of `SECRET_KEY_FALLBACKS` still open it). AES-SIV is deterministic, so
one task keeps one handle, which callers compare, and the handle shows nothing: not the user's id, not
the remote's task id. Only the caller who started the task, on the endpoint that gave the handle out,
gets it back; for anyone else a handle is an unknown task.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from typing import Any, Final

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESSIV

from mcp_django.conf import mcp_settings
from mcp_django.protocol.context import RequestContext
from mcp_django.protocol.jsonrpc import InvalidParams

_PURPOSE: Final = "gateway-task-handles"
_ASSOCIATED: Final = [b"mcp_django.gateway.task"]
_PREFIX: Final = "rt-"


def _bound_to(ctx: RequestContext) -> list[Any]:
    principal = ctx.connection.principal_id
    return [getattr(ctx.endpoint, "name", ""), None if principal is None else str(principal)]


def _seal(value: list[Any]) -> str:
    key = mcp_settings.signing_keys(_PURPOSE)[0]
    sealed = AESSIV(key).encrypt(json.dumps(value, separators=(",", ":")).encode(), _ASSOCIATED)
    return _PREFIX + base64.urlsafe_b64encode(sealed).decode().rstrip("=")


def _open(handle: str) -> Any:
    if not handle.startswith(_PREFIX):
        return None
    try:
        body = handle[len(_PREFIX) :]
        sealed = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
    except (binascii.Error, ValueError):
        return None
    for key in mcp_settings.signing_keys(_PURPOSE):
        try:
            return json.loads(AESSIV(key).decrypt(sealed, _ASSOCIATED))
        except (InvalidTag, ValueError):
            continue
    return None


def outer_task(result: Mapping[str, Any], server: str, ctx: RequestContext) -> dict[str, Any]:
    """A remote `CreateTaskResult` or `DetailedTask` with its `taskId` made this caller's handle."""
    out = dict(result)
    if isinstance(out.get("taskId"), str):
        out["taskId"] = _seal([server, *_bound_to(ctx), out["taskId"]])
    return out


def remote_task(handle: Any, ctx: RequestContext) -> tuple[str, str]:
    """The remote server's name and its task id for `handle`, given out to this caller on this endpoint.

    Raises:
        InvalidParams: not a string, forged, altered, or another caller's or endpoint's (`Unknown task`).
    """
    if not isinstance(handle, str):
        raise InvalidParams("Invalid params: taskId must be a string")
    opened = _open(handle)
    if not (isinstance(opened, list) and len(opened) == 4):
        raise InvalidParams(f"Unknown task: {handle}")
    server, endpoint, principal, task_id = opened
    if [endpoint, principal] != _bound_to(ctx) or not isinstance(server, str) or not isinstance(task_id, str):
        raise InvalidParams(f"Unknown task: {handle}")
    return server, task_id
