"""An OpenTelemetry SDK that records everything and exports nothing: what the telemetry benchmarks measure.

`install_dropping_sdk()` sets a `TracerProvider` that samples every span into a `BatchSpanProcessor`
whose exporter drops the batch, and a `MeterProvider` whose periodic reader aggregates every measurement
and drops the export: the SDK's whole cost in the process, none of a collector's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def install_dropping_sdk() -> Any:
    """Set the process's tracer and meter providers (once, before the first request); the tracer provider."""
    from opentelemetry import metrics, trace
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import MetricExporter, MetricExportResult, PeriodicExportingMetricReader
    from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

    class DropSpans(SpanExporter):
        def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
            return SpanExportResult.SUCCESS

    class DropMetrics(MetricExporter):
        def export(self, metrics_data: Any, timeout_millis: float = 10_000, **kwargs: Any) -> MetricExportResult:
            return MetricExportResult.SUCCESS

        def force_flush(self, timeout_millis: float = 10_000) -> bool:
            return True

        def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
            return None

    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(DropSpans()))
    trace.set_tracer_provider(provider)
    metrics.set_meter_provider(MeterProvider(metric_readers=[PeriodicExportingMetricReader(DropMetrics())]))
    return provider
