"""A small OTLP/HTTP receiver for the live tests: a plain `http.server` decoding what exporters POST.

Traces (`/v1/traces`) and metrics (`/v1/metrics`) arrive as protobuf (`opentelemetry-proto`); the
receiver keeps each span as a plain record and each metric's name, and lets a test wait, bounded,
until what it expects has arrived.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span as ProtoSpan

KINDS = {ProtoSpan.SPAN_KIND_SERVER: "SERVER", ProtoSpan.SPAN_KIND_CLIENT: "CLIENT"}


@dataclass(frozen=True)
class ReceivedSpan:
    """One exported span: ids as hex, as the W3C `traceparent` writes them."""

    name: str
    kind: str
    trace_id: str
    span_id: str
    parent_id: str
    attributes: dict[str, Any]
    service: str


@dataclass
class Received:
    """What the exporters sent so far, and a condition to wait on."""

    spans: list[ReceivedSpan] = field(default_factory=list)
    metrics: set[str] = field(default_factory=set)
    changed: threading.Condition = field(default_factory=threading.Condition)

    def wait_for(self, predicate: Callable[[Received], bool], timeout: float) -> bool:
        """Whether `predicate` came true within `timeout` seconds of spans and metrics arriving."""
        with self.changed:
            return self.changed.wait_for(lambda: predicate(self), timeout)


def _value(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    return getattr(value, kind) if kind in ("string_value", "int_value", "bool_value", "double_value") else None


def _spans(request: ExportTraceServiceRequest) -> Iterator[ReceivedSpan]:
    for resource_spans in request.resource_spans:
        resource = {item.key: _value(item.value) for item in resource_spans.resource.attributes}
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                yield ReceivedSpan(
                    name=span.name,
                    kind=KINDS.get(span.kind, "OTHER"),
                    trace_id=span.trace_id.hex(),
                    span_id=span.span_id.hex(),
                    parent_id=span.parent_span_id.hex(),
                    attributes={item.key: _value(item.value) for item in span.attributes},
                    service=str(resource.get("service.name", "")),
                )


def _handler(received: Received) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if self.path == "/v1/traces":
                traces = ExportTraceServiceRequest.FromString(body)
                answer = ExportTraceServiceResponse().SerializeToString()
                with received.changed:
                    received.spans.extend(_spans(traces))
                    received.changed.notify_all()
            elif self.path == "/v1/metrics":
                metrics = ExportMetricsServiceRequest.FromString(body)
                answer = ExportMetricsServiceResponse().SerializeToString()
                names = {m.name for r in metrics.resource_metrics for s in r.scope_metrics for m in s.metrics}
                with received.changed:
                    received.metrics |= names
                    received.changed.notify_all()
            else:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, format: str, *args: Any) -> None:
            return None

    return Handler


@contextlib.contextmanager
def otlp_receiver() -> Iterator[tuple[str, Received]]:
    """An OTLP/HTTP endpoint on a free loopback port (its base URL) and what it receives, until the block ends."""
    received = Received()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(received))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", received
    finally:
        server.shutdown()
        server.server_close()
