"""Asking the client: server-to-client requests (handshake era), `input_required` round trips (stateless).

In the handshake era a request that may stream sends its questions on its own stream and awaits the
answers (`ask_client`); in the stateless era the answers come back with the retried request, along
with the signed `requestState` (`restore_inputs`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mcp_django.protocol.context import Connection, RequestContext
from mcp_django.protocol.inputs import ClientRequestError, PendingRequests, RequestStateCodec, error_of
from mcp_django.protocol.jsonrpc import Message

if TYPE_CHECKING:
    from mcp_django.protocol.observers import MessageObserver


def restore_inputs(codec: RequestStateCodec, ctx: RequestContext, params: Mapping[str, Any]) -> None:
    """Load the answers and state an `input_required` retry carries back."""
    if "requestState" in params:
        restored = codec.open(params["requestState"], ctx.state_binding)
        ctx.answers.update(restored.get("answers") or {})
        ctx.state.update(restored.get("state") or {})
    responses = params.get("inputResponses")
    if isinstance(responses, dict):
        ctx.answers.update(responses)


async def ask_client(
    pending: PendingRequests,
    answer_within: float,
    ctx: RequestContext,
    requests: Mapping[str, Message],
    observer: MessageObserver | None = None,
) -> dict[str, Any]:
    """Send handshake-era server-to-client requests on the request's stream and await their results.

    `observer` (the handler's) observes each request sent and the client's reply.
    """
    owner = session_key(ctx.connection)
    emit = ctx.emit
    assert emit is not None

    async def ask(request: Message) -> Any:
        request_id, answer = pending.open(owner)
        try:
            await pending.watch(request_id)
            outgoing = {"jsonrpc": "2.0", "id": request_id, "method": request["method"]}
            if request.get("params") is not None:  # optional: a `roots/list` request often has none
                outgoing["params"] = request["params"]
            with observer.asking(outgoing, ctx.connection) if observer else contextlib.nullcontext() as observation:
                await emit(outgoing)
                try:
                    reply = await asyncio.wait_for(answer, answer_within)
                except TimeoutError:
                    await ctx.send_notification(
                        "notifications/cancelled", {"requestId": request_id, "reason": "timeout"}
                    )
                    raise ClientRequestError(0, "The client did not answer in time") from None
                if observation is not None:
                    observation.answered(reply)
        finally:
            pending.close(request_id)
            await pending.unwatch(request_id)
        if "error" in reply:
            raise error_of(reply["error"])
        return reply.get("result")

    keys = list(requests)
    results = await asyncio.gather(*(ask(requests[key]) for key in keys))
    return dict(zip(keys, results, strict=True))


def session_key(connection: Connection) -> str | None:
    """What a connection's requests are filed under: its handshake session's id (None without a session)."""
    session = connection.session
    if session is None:
        return None
    return session.session_id or str(id(session))
