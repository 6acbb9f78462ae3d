"""The client side of the MCP conventions: a CLIENT span for every request the package sends.

Two kinds of request go out: those the server sends its client while it serves one of the client's
(elicitation, sampling, roots: `ServerTelemetry.asking`), and those a gateway, a hub or `MCPClient`
sends a remote MCP server (`ServerTelemetry.sending`, through `Extension.client_observers`). Both are a
`CLIENT` span under whatever span is current (the call being served), with its context injected into
the request's `params._meta`, so the peer continues the trace.
"""

from __future__ import annotations

import asyncio
import functools
import time
from typing import Any, Final
from urllib.parse import urlsplit

from opentelemetry import metrics, propagate, trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from mcp_django.protocol.jsonrpc import Message
from mcp_django.protocol.observers import RemotePeer
from mcp_django.telemetry import semconv

_PIPE: Final = {semconv.NETWORK_TRANSPORT: "pipe"}


def span_name(method: str, params: Any) -> tuple[str, dict[str, Any]]:
    """The span name `{mcp.method.name} {target}` for a request, and the attributes naming its target."""
    attributes: dict[str, Any] = {semconv.METHOD_NAME: method}
    target_key = semconv.TARGETS.get(method)
    target = params.get("name") if target_key is not None and isinstance(params, dict) else None
    if method == "tools/call":
        attributes[semconv.OPERATION_NAME] = semconv.EXECUTE_TOOL
    if not isinstance(target, str):
        return method, attributes
    attributes[target_key] = target  # type: ignore[index]
    return f"{method} {target}", attributes


def inject(request: Message, context: Any = None) -> None:
    """Put the trace context (`context`, else the current one) into `request`'s `params._meta`.

    The request's params and `_meta` are copied, not changed in place: the caller may share them.
    """
    params = request.get("params")
    params = dict(params) if isinstance(params, dict) else {}
    meta = dict(params.get("_meta") or {})
    propagate.inject(meta, context=context)
    request["params"] = {**params, "_meta": meta}


def peer_attributes(peer: RemotePeer) -> dict[str, Any]:
    """`server.address`, `server.port` and the network attributes of a remote server."""
    if peer.transport != "http" or peer.url is None:
        return dict(_PIPE)
    return dict(_url_attributes(peer.url))


@functools.lru_cache(maxsize=64)
def _url_attributes(url: str) -> dict[str, Any]:
    # A handful of remote servers, one parse each (a copy is handed out: callers add to it).
    attributes: dict[str, Any] = dict(semconv.HTTP_ATTRIBUTES)
    parts = urlsplit(url)
    if parts.hostname:
        attributes[semconv.SERVER_ADDRESS] = parts.hostname
        attributes[semconv.SERVER_PORT] = parts.port or (443 if parts.scheme == "https" else 80)
    return attributes


class ClientRequest:
    """One outgoing request's CLIENT span, a child of the current span, its context injected into the request.

    Args:
        tracer: makes the span.
        request: the JSON-RPC request, about to be sent (its `params._meta` gets the trace context).
        attributes: what the span says of the peer (session, transport, server address).
        duration: the histogram its duration goes to (`mcp.client.operation.duration`), if any.
    """

    __slots__ = ("attributes", "duration", "request", "span", "started", "tracer")

    def __init__(
        self,
        tracer: trace.Tracer,
        request: Message,
        attributes: dict[str, Any],
        duration: metrics.Histogram | None = None,
    ) -> None:
        self.tracer = tracer
        self.request = request
        self.attributes = attributes
        self.duration = duration

    def __enter__(self) -> ClientRequest:
        self.started = time.perf_counter()
        name, attributes = span_name(str(self.request.get("method")), self.request.get("params"))
        attributes.update(self.attributes)
        self.attributes = {key: value for key, value in attributes.items() if key in semconv.CLIENT_METRIC_ATTRIBUTES}
        attributes[semconv.REQUEST_ID] = str(self.request.get("id"))
        self.span = self.tracer.start_span(name, kind=SpanKind.CLIENT, attributes=attributes)
        inject(self.request, trace.set_span_in_context(self.span))
        return self

    def answered(self, reply: Message | list[Message] | None) -> None:
        failure = failure_of(reply)
        if failure is not None:
            failed(self.span, self.attributes, *failure)

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, traceback: Any) -> None:
        if error is not None:
            cancelled = kind is asyncio.CancelledError
            failed(
                self.span, self.attributes, semconv.CANCELLED if cancelled else _error_type(error), str(error) or None
            )
        self.span.end()
        if self.duration is not None:
            self.duration.record(time.perf_counter() - self.started, self.attributes)


def failure_of(reply: Message | list[Message] | None) -> tuple[str, str | None, str | None] | None:
    """What a reply says went wrong, as `(error.type, description, rpc.response.status_code)`; None: nothing.

    A JSON-RPC error is its code (`timeout` when `data.reason` says so, the code still the status);
    a result with `isError` is `tool_error`.
    """
    if not isinstance(reply, dict):
        return None
    error = reply.get("error")
    if isinstance(error, dict):
        code = str(error.get("code"))
        data = error.get("data")
        timed_out = isinstance(data, dict) and data.get("reason") == semconv.TIMEOUT
        return semconv.TIMEOUT if timed_out else code, str(error.get("message", "")), code
    result = reply.get("result")
    if isinstance(result, dict) and result.get("isError") is True:
        return semconv.TOOL_ERROR, semconv.TOOL_ERROR, None
    return None


def failed(
    span: trace.Span,
    attributes: dict[str, Any],
    error_type: str,
    description: str | None,
    status_code: str | None = None,
) -> None:
    """Mark `span` failed, and say so in `attributes` (its duration metric's) too."""
    attributes[semconv.ERROR_TYPE] = error_type
    span.set_attribute(semconv.ERROR_TYPE, error_type)
    if status_code is not None:
        attributes[semconv.STATUS_CODE] = status_code
        span.set_attribute(semconv.STATUS_CODE, status_code)
    span.set_status(Status(StatusCode.ERROR, description))


def _error_type(error: BaseException) -> str:
    # A gateway's BackendUnavailable says why (`timeout`, `unreachable`, ...): that is the low-cardinality type.
    reason = getattr(error, "reason", None)
    return reason if isinstance(reason, str) else type(error).__qualname__
