"""Two endpoints serving the benchmark registry: one with no interceptors, one with ten no-ops."""

from __future__ import annotations

from benchmarks.bench_interceptors import TEN, registry
from mcp_django.urls import endpoint

urlpatterns = [
    *endpoint("bare/mcp", registry=registry, name="bench-bare", allow_anonymous=True, interceptors=[]),
    *endpoint("ten/mcp", registry=registry, name="bench-ten", allow_anonymous=True, interceptors=TEN),
]
