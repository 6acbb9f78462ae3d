"""Safe side effects around tool calls: idempotency keys (`idempotency.py`) (docs/side-effects.md)."""
