"""The audit trail: `AuditSinkInterceptor` stores every tool call as a `ToolCallRecord`.

The sink only hands a row to `AuditWriter`, a background thread that writes rows in batches, so
a tool call never waits for the database. The buffer is bounded: when it is full, rows are
dropped and counted, and a warning is logged. `flush_audit_log()` waits (boundedly) until every
row handed over so far is written; tests use it, and it runs at interpreter exit.
"""

from __future__ import annotations

import atexit
import logging
import queue
import threading
import time
from datetime import datetime
from typing import Any, Final

import pydantic
from django.db import close_old_connections

from mcp_django.interceptors.base import Invocation, SinkInterceptor, SinkResult

__all__ = ["AuditOptions", "AuditSinkInterceptor", "AuditWriter", "audit_writer", "flush_audit_log"]

logger = logging.getLogger("mcp_django.interceptors")

BUFFER_SIZE: Final = 10_000
BATCH_SIZE: Final = 200


class AuditWriter:
    """Writes `ToolCallRecord` rows from a bounded in-memory buffer on a daemon thread.

    Args:
        capacity: rows the buffer holds before new ones are dropped.
        batch_size: rows written per `bulk_create`.
    """

    def __init__(self, capacity: int = BUFFER_SIZE, batch_size: int = BATCH_SIZE) -> None:
        self._queue: queue.Queue[dict[str, Any]] = queue.Queue(maxsize=capacity)
        self._batch_size = batch_size
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self.dropped = 0

    def submit(self, row: dict[str, Any]) -> bool:
        """Queue one row (keyword arguments of `ToolCallRecord`); False when the buffer is full."""
        self._ensure_thread()
        try:
            self._queue.put_nowait(row)
        except queue.Full:
            self.dropped += 1
            logger.warning("Audit buffer full: dropped a %r record (%d so far)", row.get("tool"), self.dropped)
            return False
        return True

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait until every row submitted so far is written (or failed); False if `timeout` passed first."""
        deadline = time.monotonic() + timeout
        with self._queue.all_tasks_done:
            while self._queue.unfinished_tasks:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._queue.all_tasks_done.wait(remaining)
        return True

    def _ensure_thread(self) -> None:
        if self._thread is not None and self._thread.is_alive():
            return
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="mcp-django-audit", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        while True:
            batch = [self._queue.get()]
            while len(batch) < self._batch_size:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            try:
                self._write(batch)
                close_old_connections()
            except Exception:  # the thread must survive a database outage; the rows are lost, and logged
                logger.exception("Could not write %d audit records", len(batch))
            finally:
                for _ in batch:
                    self._queue.task_done()

    @staticmethod
    def _write(batch: list[dict[str, Any]]) -> None:
        from mcp_django.models import ToolCallRecord  # models need the app registry, ready only later

        ToolCallRecord.objects.bulk_create([ToolCallRecord(**row) for row in batch])


_writer = AuditWriter()


def audit_writer() -> AuditWriter:
    """The process's audit writer."""
    return _writer


def flush_audit_log(timeout: float = 5.0) -> bool:
    """Wait until every audit record handed over so far is in the database; False on timeout."""
    return _writer.flush(timeout)


atexit.register(flush_audit_log, 2.0)


class AuditOptions(pydantic.BaseModel):
    """Options of `AuditSinkInterceptor`."""

    model_config = pydantic.ConfigDict(extra="forbid", frozen=True)

    origin: str = pydantic.Field("agent", max_length=32, description="Stored as the record's origin.")
    record_arguments: bool = pydantic.Field(True, description="Store the arguments (False stores {}).")


class AuditSinkInterceptor(SinkInterceptor):
    """Stores every tool call (user, endpoint, tool, arguments, outcome, duration) as a `ToolCallRecord`.

    It hooks the response phase, which also observes calls the chain refused (`outcome="blocked"`)
    and protocol errors such as an unknown tool (`outcome="error"`). The arguments are the ones
    the tool received: after every request-phase mutation, redaction included.
    """

    name = "audit"
    description = "Stores every tool call in the audit trail"
    events = ("tools/call",)
    phases = ("response",)
    Options = AuditOptions

    async def record(self, invocation: Invocation) -> SinkResult:
        context = invocation.context
        request = context.request or {}
        options: AuditOptions = invocation.options
        user = context.user if context.principal.get("type") == "user" else None
        arguments = request.get("arguments") if options.record_arguments else None
        accepted = audit_writer().submit(
            {
                "user_id": getattr(user, "pk", None),
                "endpoint": context.endpoint or "",
                "tool": str(request.get("name", ""))[:128],
                "arguments": arguments if isinstance(arguments, dict) else {},
                "outcome": context.outcome or "ok",
                "duration_ms": round(context.duration_ms or 0.0, 3),
                "origin": options.origin,
                "trace_id": context.trace_id,
                "created": datetime.fromisoformat(context.timestamp) if context.timestamp else None,
            }
        )
        return SinkResult(recorded=accepted)
