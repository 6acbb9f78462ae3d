"""The server side of the MCP conventions: a SERVER span and a duration for every message served.

`ServerTelemetry` is a `MessageObserver` (`mcp_django.protocol.observers`): the handler enters its
observation before it looks at a message, so the span is current while the message is served, in
hooks, interceptors, sources and in sync tools on the database threads (`executor.run_sync` copies
the context), and whatever the tool traces (ORM queries, outgoing HTTP) nests under it.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Final

from opentelemetry import context as otel_context
from opentelemetry import metrics, propagate, trace
from opentelemetry.trace import Link, SpanKind

try:  # where the API keeps the providers set; no public name says "not configured"
    from opentelemetry.metrics import _internal as _metrics_api
except ImportError:  # pragma: no cover - a later API: ask the public functions
    _metrics_api = None  # type: ignore[assignment]

from mcp_django.endpoints.sessions import ExpiredSession, StoredSession
from mcp_django.protocol.context import META_PROTOCOL_VERSION, Connection
from mcp_django.protocol.errors import is_unavailable
from mcp_django.protocol.jsonrpc import Message
from mcp_django.protocol.observers import UNOBSERVED, RemotePeer, Unobserved
from mcp_django.telemetry import content, semconv
from mcp_django.telemetry.client import ClientRequest, failed, failure_of, inject, peer_attributes, span_name
from mcp_django.telemetry.content import content_options
from mcp_django.version import __version__

SCOPE_NAME: Final = "mcp_django"
"""The instrumentation scope of every span and metric the package emits."""

_OPENED: Final = "mcp_django.telemetry.opened"
"""`Connection.extra` key: when a channel's session began (`time.monotonic()`)."""

_CARRIER_KEYS: Final = ("traceparent", "tracestate", "baggage")
_LISTEN: Final = "subscriptions/listen"
_STREAM_ATTRIBUTES: Final = (semconv.PROTOCOL_VERSION, semconv.NETWORK_TRANSPORT, semconv.NETWORK_PROTOCOL)


class ServerTelemetry:
    """Observes every message of one endpoint: a SERVER span each, and the two duration histograms.

    Args:
        tracer_provider: where spans go; None: the global one (a no-op until an SDK is configured).
        meter_provider: where metrics go; None: the global one.
    """

    def __init__(
        self,
        tracer_provider: trace.TracerProvider | None = None,
        meter_provider: metrics.MeterProvider | None = None,
    ) -> None:
        # Proxies until an SDK is configured, then they forward: fetched once, never cached stale.
        self._given = tracer_provider is not None or meter_provider is not None
        self.tracer = trace.get_tracer(SCOPE_NAME, __version__, tracer_provider)
        meter = metrics.get_meter(SCOPE_NAME, __version__, meter_provider)
        self.operation_duration = meter.create_histogram(
            semconv.OPERATION_DURATION,
            unit="s",
            description="The duration of an MCP request or notification, as the server served it.",
            explicit_bucket_boundaries_advisory=list(semconv.DURATION_BUCKETS),
        )
        self.client_duration = meter.create_histogram(
            semconv.CLIENT_OPERATION_DURATION,
            unit="s",
            description="The duration of an MCP request sent to a remote server, until its answer came.",
            explicit_bucket_boundaries_advisory=list(semconv.DURATION_BUCKETS),
        )
        self.refusals = meter.create_counter(
            semconv.REFUSALS,
            unit="{request}",
            description="Requests refused, by reason: interceptor, rate_limit, scope, unavailable.",
        )
        self.audit_rows = meter.create_counter(
            semconv.AUDIT_ROWS,
            unit="{row}",
            description="Audit rows, by what became of them: committed, spooled, dropped.",
        )
        self.active_channels = meter.create_up_down_counter(
            semconv.ACTIVE_CHANNELS, unit="{channel}", description="Open WebSocket and stdio channels."
        )
        self.active_streams = meter.create_up_down_counter(
            semconv.ACTIVE_STREAMS, unit="{stream}", description="Open subscriptions/listen streams."
        )
        self.session_duration = meter.create_histogram(
            semconv.SESSION_DURATION,
            unit="s",
            description="The duration of an MCP session (HTTP, WebSocket or stdio), as the server saw it.",
            explicit_bucket_boundaries_advisory=list(semconv.DURATION_BUCKETS),
        )

    def observe(self, message: Any, connection: Connection) -> _Observation | Unobserved:
        """A span for a request or notification; nothing for a client's response or a message with no method."""
        method = message.get("method") if isinstance(message, dict) else None
        if not isinstance(method, str):
            return UNOBSERVED
        if not self._given and not _configured():
            # No SDK: nothing would be recorded. Only a client's trace context is worth carrying on
            # (to what the tool calls, a gateway's backend), as the API alone does.
            params = message.get("params")
            meta = params.get("_meta") if isinstance(params, dict) else None
            return _Propagation(meta) if isinstance(meta, dict) and "traceparent" in meta else UNOBSERVED
        return _Observation(self, message, method, connection)

    def asking(self, request: Message, connection: Connection) -> ClientRequest | Unobserved:
        """A CLIENT span for a request the server sends the client, its context injected into `params._meta`."""
        if not self._given and not _configured():
            return UNOBSERVED
        attributes: dict[str, Any] = {}
        session = connection.session
        if session is not None:
            attributes[semconv.PROTOCOL_VERSION] = session.protocol_version
            if session.session_id:
                attributes[semconv.SESSION_ID] = session.session_id
        attributes.update(_transport_attributes(connection))
        return ClientRequest(self.tracer, request, attributes)

    def sending(self, request: Message, peer: RemotePeer) -> ClientRequest | Unobserved:
        """A CLIENT span for a request to a remote MCP server (a gateway's, a hub's, `MCPClient`'s).

        With no SDK configured there is no span, but a trace context that is current (a client's, from
        `params._meta`) still goes along, so the remote continues the client's trace.
        """
        if not self._given and not _configured():
            if trace.get_current_span().get_span_context().is_valid:
                inject(request)
            return UNOBSERVED
        attributes = peer_attributes(peer)
        if peer.protocol_version is not None:
            attributes[semconv.PROTOCOL_VERSION] = peer.protocol_version
        if peer.session_id:
            attributes[semconv.SESSION_ID] = peer.session_id
        return ClientRequest(self.tracer, request, attributes, self.client_duration)

    def opened(self, connection: Connection) -> None:
        """Remember when the channel's session began, and count it open."""
        connection.extra[_OPENED] = time.monotonic()
        self.active_channels.add(1, _transport_attributes(connection))

    def refused(self, sender: Any, reason: str, method: str, **kwargs: Any) -> None:
        """Count a refusal the client was not told the reason of (the core's `refusals.refused` signal: `scope`)."""
        self.refusals.add(1, {semconv.REFUSAL_REASON: reason, semconv.METHOD_NAME: method})

    def session_ended(self, sender: Any, record: StoredSession, ended_at: float, **kwargs: Any) -> None:
        """Record `mcp.server.session.duration` for an HTTP session its client ended (the `session_ended` signal)."""
        if record.opened_at is None:
            return
        attributes = {**semconv.HTTP_ATTRIBUTES, semconv.PROTOCOL_VERSION: record.state.protocol_version}
        self.session_duration.record(max(0.0, ended_at - record.opened_at), attributes)

    def sessions_expired(self, sender: Any, sessions: list[ExpiredSession], **kwargs: Any) -> None:
        """Record `mcp.server.session.duration` for HTTP sessions that expired: from their opening to their expiry."""
        record = self.session_duration.record
        for opened_at, expired_at, version in sessions:
            record(max(0.0, expired_at - opened_at), {**semconv.HTTP_ATTRIBUTES, semconv.PROTOCOL_VERSION: version})

    def closed(self, connection: Connection) -> None:
        """Record `mcp.server.session.duration` for the channel that closed."""
        began = connection.extra.pop(_OPENED, None)
        if began is None:
            return
        attributes = _transport_attributes(connection)
        self.active_channels.add(-1, dict(attributes))
        if connection.session is not None:
            attributes[semconv.PROTOCOL_VERSION] = connection.session.protocol_version
        self.session_duration.record(time.monotonic() - began, attributes)


class _Propagation(Unobserved):
    """With no SDK configured: the client's trace context from `params._meta`, current while the message is served."""

    __slots__ = ("meta", "token")

    def __init__(self, meta: dict[str, Any]) -> None:
        self.meta = meta

    def __enter__(self) -> _Propagation:
        self.token = otel_context.attach(_parent(self.meta)[0])
        return self

    def __exit__(self, *exc: object) -> None:
        otel_context.detach(self.token)


class _Observation:
    """One message's SERVER span, current while the message is served, and its duration."""

    __slots__ = ("attributes", "connection", "message", "method", "span", "started", "telemetry", "token")

    def __init__(
        self, telemetry: ServerTelemetry, message: dict[str, Any], method: str, connection: Connection
    ) -> None:
        self.telemetry = telemetry
        self.message = message
        self.method = method
        self.connection = connection
        self.attributes: dict[str, Any] = {}

    def __enter__(self) -> _Observation:
        self.started = time.perf_counter()
        params = self.message.get("params")
        params = params if isinstance(params, dict) else {}
        meta = params.get("_meta")
        parent, links = _parent(meta if isinstance(meta, dict) else None)
        name, attributes = span_name(self.method, params)
        version = _protocol_version(meta, self.connection)
        if version is not None:
            attributes[semconv.PROTOCOL_VERSION] = version
        attributes.update(_transport_attributes(self.connection))
        metric_attributes = dict(attributes)
        request_id = self.message.get("id")
        if isinstance(request_id, (str, int)) and not isinstance(request_id, bool):
            attributes[semconv.REQUEST_ID] = str(request_id)
        uri = params.get("uri")
        if self.method in semconv.RESOURCE_METHODS and isinstance(uri, str):
            attributes[semconv.RESOURCE_URI] = uri
        session = self.connection.session
        if session is not None and session.session_id:
            attributes[semconv.SESSION_ID] = session.session_id
        if self.method == "tools/call" and (redaction := content_options()) is not None:
            attributes[content.ARGUMENTS] = content.recorded(params.get("arguments") or {}, redaction)
        self.span = self.telemetry.tracer.start_span(
            name, context=parent, kind=SpanKind.SERVER, attributes=attributes, links=links
        )
        self.attributes = metric_attributes  # from here on: what the duration metric carries
        self.token = otel_context.attach(trace.set_span_in_context(self.span, parent))
        if self.method == _LISTEN:
            self.telemetry.active_streams.add(1, _stream_attributes(self.attributes))
        return self

    def answered(self, reply: Message | list[Message] | None) -> None:
        failure = failure_of(reply)
        if failure is not None:
            failed(self.span, self.attributes, *failure)
            error = reply.get("error") if isinstance(reply, dict) else None
            if _unavailable(error):
                refusal = {semconv.REFUSAL_REASON: "unavailable", semconv.METHOD_NAME: self.method}
                self.telemetry.refusals.add(1, refusal)
        result = reply.get("result") if isinstance(reply, dict) else None
        if isinstance(result, dict) and self.method == "tools/call" and (redaction := content_options()) is not None:
            shown = {key: value for key, value in result.items() if key != "_meta"}
            self.span.set_attribute(content.RESULT, content.recorded(shown, redaction))
        if isinstance(result, dict) and self.method == "initialize":
            # The version the server chose, and the session it opened (not known before the answer).
            version = result.get("protocolVersion")
            session = self.connection.session
            if isinstance(version, str):
                self.attributes[semconv.PROTOCOL_VERSION] = version
                self.span.set_attribute(semconv.PROTOCOL_VERSION, version)
            if session is not None and session.session_id:
                self.span.set_attribute(semconv.SESSION_ID, session.session_id)

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, traceback: Any) -> None:
        try:
            if error is not None:
                cancelled = isinstance(error, asyncio.CancelledError)
                error_type = semconv.CANCELLED if cancelled else type(error).__qualname__
                failed(self.span, self.attributes, error_type, str(error) or None)
            self.span.end()
            self.telemetry.operation_duration.record(time.perf_counter() - self.started, self.attributes)
            if self.method == _LISTEN:
                self.telemetry.active_streams.add(-1, _stream_attributes(self.attributes))
        finally:
            otel_context.detach(self.token)


_ever_configured: list[bool] = []


def _configured() -> bool:
    """Whether an SDK (or any real provider) was set for traces or metrics, so that spans and points are kept.

    Providers are set once per process and never unset, so a yes is remembered; a no is asked again.
    """
    if _ever_configured:
        return True
    if not _provider_set():
        return False
    _ever_configured.append(True)
    return True


def _provider_set() -> bool:
    """Whether a tracer or a meter provider was set, read where the API's own proxies read it.

    `get_tracer_provider()` and `get_meter_provider()` look `OTEL_PYTHON_*_PROVIDER` up in `os.environ`
    on every call while none is set (about 1 µs each); the environment was read when `ServerTelemetry`
    fetched its tracer and meter (which loads a provider named there), so the globals say it all.
    """
    if _READABLE:
        return trace._TRACER_PROVIDER is not None or _metrics_api._METER_PROVIDER is not None
    return not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)  # pragma: no cover


_READABLE: Final = hasattr(trace, "_TRACER_PROVIDER") and hasattr(_metrics_api, "_METER_PROVIDER")


def _parent(meta: dict[str, Any] | None) -> tuple[otel_context.Context, list[Link]]:
    """The span's parent: the context the client sent in `params._meta`, else the ambient one.

    When both exist, the ambient span (the HTTP request's, say) is linked: one MCP request may span
    several HTTP requests and one HTTP request may carry several MCP messages (the convention's note).
    """
    ambient = otel_context.get_current()
    if meta is None or "traceparent" not in meta:
        return ambient, []
    carrier = {key: meta[key] for key in _CARRIER_KEYS if isinstance(meta.get(key), str)}
    sent = propagate.extract(carrier, context=ambient)
    ambient_span = trace.get_current_span(ambient).get_span_context()
    if not ambient_span.is_valid or trace.get_current_span(sent).get_span_context() == ambient_span:
        return sent, []  # nothing to link, or the traceparent was unreadable and the ambient span stays the parent
    return sent, [Link(ambient_span)]


def _stream_attributes(attributes: dict[str, Any]) -> dict[str, Any]:
    # The same when the stream opens and when it ends (however it ends), so the two adds cancel out.
    return {key: attributes[key] for key in _STREAM_ATTRIBUTES if key in attributes}


def _unavailable(error: Any) -> bool:
    """Whether a JSON-RPC error says the service could not serve now: the database (`ServiceUnavailable`) or
    a gateway's remote server (`BackendUnavailable`, whose `data` names the backend)."""
    data = error.get("data") if isinstance(error, dict) else None
    return is_unavailable(error) or (isinstance(data, dict) and "backend" in data and "reason" in data)


def _protocol_version(meta: Any, connection: Connection) -> str | None:
    if isinstance(meta, dict) and isinstance(version := meta.get(META_PROTOCOL_VERSION), str):
        return version
    if connection.session is not None:
        return connection.session.protocol_version
    return connection.version_header


def _transport_attributes(connection: Connection) -> dict[str, Any]:
    network = semconv.TRANSPORTS.get(connection.transport)
    if network is None:
        return {}
    transport, protocol = network
    return {semconv.NETWORK_TRANSPORT: transport, **({semconv.NETWORK_PROTOCOL: protocol} if protocol else {})}
