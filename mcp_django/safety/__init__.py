"""Safe side effects around tool calls (docs/side-effects.md): idempotency keys (`idempotency.py`) and
approvals (`approvals.py`)."""
