"""Signals of the interceptor chain, for whoever watches it without taking part (telemetry, logs)."""

from __future__ import annotations

from django.dispatch import Signal

phase_ran = Signal()
"""Sent (by `InterceptorPlan`) when one phase of the chain has run, with `chain`: its `ChainResult`
(the event, phase, status and each invocation's outcome and duration). Receivers run in the request's
context, synchronously: keep them quick."""
