"""The telemetry SDK row's application: `benchmarks.asgi.fast_path` in a process with an SDK that drops its exports.

The SDK is set before Django loads, as a project sets its own providers in `asgi.py` (benchmarks/otel.py).
"""

from __future__ import annotations

from typing import Any

from benchmarks.otel import install_dropping_sdk

install_dropping_sdk()

from benchmarks.asgi import fast_path as _fast_path  # noqa: E402

fast_path: Any = _fast_path
