"""The OpenTelemetry SDK, configured once for the test process, with in-memory exporters.

The package never configures an SDK; a test process does, as a project would. The providers are
global (OpenTelemetry allows setting them once), so each test reads what it emitted after clearing.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import HistogramDataPoint, InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.gateway.conftest import sdk_backend_url

__all__ = ["Telemetry", "sdk_backend_url", "telemetry"]  # the official SDK's server, for the client span tests


@dataclass
class Telemetry:
    """What the SDK received: the finished spans, and the metrics read on demand."""

    spans: InMemorySpanExporter
    metrics: InMemoryMetricReader

    def finished(self, prefix: str = "") -> list[ReadableSpan]:
        """The finished spans whose name starts with `prefix`, in the order they ended."""
        return [span for span in self.spans.get_finished_spans() if span.name.startswith(prefix)]

    def points(self, name: str) -> list[tuple[dict[str, object], int, float]]:
        """`(attributes, count, sum)` of every data point of the histogram `name`."""
        data = self.metrics.get_metrics_data()
        found: list[tuple[dict[str, object], int, float]] = []
        for resource in data.resource_metrics if data else ():
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    if metric.name == name:
                        points = [p for p in metric.data.data_points if isinstance(p, HistogramDataPoint)]
                        found += [(dict(p.attributes or {}), p.count, p.sum) for p in points]
        return found


_SPANS = InMemorySpanExporter()
_METRICS = InMemoryMetricReader()
_tracer_provider = TracerProvider()
_tracer_provider.add_span_processor(SimpleSpanProcessor(_SPANS))
trace.set_tracer_provider(_tracer_provider)
metrics.set_meter_provider(MeterProvider(metric_readers=[_METRICS]))


@pytest.fixture
def telemetry() -> Iterator[Telemetry]:
    _SPANS.clear()
    _METRICS.get_metrics_data()  # cumulative: read and remember nothing; tests compare counts by attributes
    yield Telemetry(_SPANS, _METRICS)
    _SPANS.clear()
