"""Safe side effects around tool calls: idempotency keys (`idempotency.py`) and approvals (`approvals.py`) (docs/side-effects.md)."""
