"""The audit trail: `AuditSinkInterceptor` stores every tool call as a `ToolCallRecord`, before the reply leaves.

The sink hands its row to `AuditWriter`, one long-lived thread per process, and waits until the
row is stored. The writer takes every row waiting when it is free and commits them in one
`bulk_create` transaction (a group commit: concurrent calls share it), so a call the client saw
succeed is always in the trail.

When the database cannot take a batch within `MCP_DJANGO["AUDIT_DB_TIMEOUT"]` seconds (locked,
read-only, unreachable), the rows are appended to a local spool file and fsynced
(`mcp_django.interceptors.spool`); the reply is released once they are on disk. Every
`AUDIT_REPLAY_INTERVAL` seconds, and when the writer starts, the spool (this process's file, and
the files of processes that died) is replayed into the database, once: rows are keyed by their
`trace_id`, and a row already there is not written again. A spool file holds at most
`AUDIT_SPOOL_MAX_BYTES`; when it is full, `AUDIT_WHEN_FULL` says what happens: `"refuse"` new tool
calls (an `AuditUnavailable` error, before the tool runs), or `"drop"` their rows (counted and
logged; `audit_status()` gives the count to the dashboard).
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import dataclasses
import logging
import os
import queue
import threading
import time
import uuid
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import pydantic
from django.db import DatabaseError, DataError, IntegrityError, connections, router, transaction

from mcp_django.conf import mcp_settings
from mcp_django.interceptors.base import Invocation, SinkInterceptor, SinkResult
from mcp_django.interceptors.spool import Spool, dump_row
from mcp_django.protocol import MCPError

__all__ = [
    "AuditOptions",
    "AuditSinkInterceptor",
    "AuditStatus",
    "AuditUnavailable",
    "AuditWriter",
    "audit_status",
    "audit_writer",
    "flush_audit_log",
    "replay_leftovers",
]

logger = logging.getLogger("mcp_django.interceptors")

BATCH_SIZE: Final = 500
"""Rows per transaction, for a group commit and for a replayed chunk alike."""

COMMITTED: Final = "committed"
SPOOLED: Final = "spooled"
DROPPED: Final = "dropped"


class AuditUnavailable(MCPError):
    """A tool call refused because its audit row could be stored nowhere (`AUDIT_WHEN_FULL = "refuse"`)."""

    default_message = "Tool calls are refused: the audit trail's database is unavailable and its spool is full."

    def __init__(self) -> None:
        super().__init__(data={"reason": "audit_unavailable"})


class _Unavailable(Exception):
    """The database could not take a batch (locked past the bounded wait, read-only, unreachable)."""


@dataclasses.dataclass(frozen=True, slots=True)
class AuditStatus:
    """The audit trail of this process, for the dashboard.

    Args:
        dropped: rows lost since the process started (spool full with `"drop"`, or unwritable).
        spooled_bytes: what this process's spool file holds, waiting for the database.
        database_available: False from a failed write until a replay succeeds.
        refusing: new tool calls are refused (`"refuse"` and a full or unwritable spool).
        commits: group commits so far (rows per commit = `committed / commits`).
        committed: rows committed by group commits so far (replayed rows are not counted).
    """

    dropped: int
    spooled_bytes: int
    database_available: bool
    refusing: bool
    commits: int = 0
    committed: int = 0


@dataclasses.dataclass(frozen=True, slots=True)
class _Pending:
    row: dict[str, Any]
    done: concurrent.futures.Future[str]


class AuditWriter:
    """Stores `ToolCallRecord` rows from one thread: group commits, the spool while the database is down, replay.

    Args:
        batch_size: the most rows one transaction takes.
    """

    def __init__(self, batch_size: int = BATCH_SIZE) -> None:
        self._batch_size = batch_size
        self._reset()

    def _reset(self) -> None:
        self._queue: queue.SimpleQueue[_Pending] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._idle = threading.Condition()
        self._unfinished = 0
        self._spool: Spool | None = None
        self._spool_broken = False
        self._down = False
        self._next_attempt = 0.0
        self.dropped = 0
        self.refusing = False
        self.commits = 0
        self.committed = 0

    # -- the calling side -------------------------------------------------------------------------

    def submit(self, row: dict[str, Any]) -> concurrent.futures.Future[str]:
        """Hand over one row (keyword arguments of `ToolCallRecord`, with a `trace_id`).

        Returns:
            A future resolved with `"committed"`, `"spooled"` or `"dropped"` once the writer is done with it.
        """
        self.start()
        done: concurrent.futures.Future[str] = concurrent.futures.Future()
        with self._idle:
            self._unfinished += 1
        self._queue.put(_Pending(row, done))
        return done

    def status(self) -> AuditStatus:
        spool = self._spool
        spooled = spool.size if spool else 0
        return AuditStatus(self.dropped, spooled, not self._down, self.refusing, self.commits, self.committed)

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait until every row handed over so far is stored (or dropped); False if `timeout` passed first."""
        with self._idle:
            return self._idle.wait_for(lambda: self._unfinished == 0, timeout)

    def start(self) -> None:
        """Start the writer thread (it replays what the spool holds first); nothing when it runs already."""
        if self._thread is not None and self._thread.is_alive():
            return
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="mcp-django-audit", daemon=True)
                self._thread.start()

    # -- the writer thread ------------------------------------------------------------------------

    def _run(self) -> None:
        while True:
            if time.monotonic() >= self._next_attempt:
                try:
                    self._replay()
                except Exception:  # the spool directory itself failed: the rows stay where they are
                    logger.exception("Could not replay the audit spool in %s", self._spool_dir())
                    self._next_attempt = time.monotonic() + float(mcp_settings.AUDIT_REPLAY_INTERVAL)
            batch = self._take(max(0.0, self._next_attempt - time.monotonic()))
            try:
                if batch:
                    self._store(batch)
            except Exception:  # the thread must outlive anything; unanswered rows would hang their calls
                logger.exception("The audit writer failed on %d records", len(batch))
                self._resolve(batch, DROPPED, count=True)
            finally:
                with contextlib.suppress(Exception):
                    _tidy_connection()
                with self._idle:
                    self._unfinished -= len(batch)
                    self._idle.notify_all()

    def _take(self, timeout: float) -> list[_Pending]:
        """Every row waiting, up to a batch, after waiting at most `timeout` for the first one."""
        try:
            batch = [self._queue.get(timeout=timeout)]
        except queue.Empty:
            return []
        while len(batch) < self._batch_size:
            try:
                batch.append(self._queue.get_nowait())
            except queue.Empty:
                break
        return batch

    def _store(self, batch: list[_Pending]) -> None:
        if not self._down:
            try:
                _write([pending.row for pending in batch], dedupe=False)
            except _Unavailable as exc:
                self._went_down(exc)
            else:
                self.commits += 1
                self.committed += len(batch)
                self._resolve(batch, COMMITTED)
                return
        self._to_spool(batch)

    def _went_down(self, exc: Exception) -> None:
        if not self._down:
            logger.warning("Audit database unavailable (%s): records go to the spool in %s", exc, self._spool_dir())
        self._down = True
        self._next_attempt = time.monotonic() + float(mcp_settings.AUDIT_REPLAY_INTERVAL)

    def _to_spool(self, batch: list[_Pending]) -> None:
        limit, policy = int(mcp_settings.AUDIT_SPOOL_MAX_BYTES), mcp_settings.AUDIT_WHEN_FULL
        spool = self._own_spool()
        lines, kept, lost = [], [], []
        size = spool.size
        for pending in batch:
            line = dump_row(pending.row)
            # "refuse" stores every row of a call already admitted; the gate stops the next ones.
            if policy == "refuse" or size + len(line) <= limit:
                lines.append(line)
                kept.append(pending)
                size += len(line)
            else:
                lost.append(pending)
        try:
            spool.append(lines)
        except OSError:
            logger.exception("Could not spool %d audit records: %s", len(kept), [p.row for p in kept])
            self._spool_broken = True
            kept, lost = [], batch
        else:
            self._spool_broken = False
        self._resolve(kept, SPOOLED)
        if lost:
            self._resolve(lost, DROPPED, count=True)
            logger.warning(
                "Audit spool %s is full: dropped %d records (%d so far)", spool.path, len(lost), self.dropped
            )
        self._update_refusing()

    def _replay(self) -> None:
        """Put what the spools hold into the database, once; on failure try again after the interval."""
        spool = self._own_spool()
        own = spool.read_own()
        try:
            if own:
                _write_chunks(own)
                spool.clear_own()
                self._update_refusing()
                logger.warning("Audit database is available again: replayed %d spooled records", len(own))
            with spool.orphans() as orphans:
                for path, rows in orphans:
                    _write_chunks(rows)
                    logger.warning("Replayed %d audit records from %s, left by another process", len(rows), path)
        except _Unavailable as exc:
            self._went_down(exc)
        else:
            self._down = False  # with nothing to replay, the next batch finds out
            self._spool_broken = False  # the spool is not needed now; the next failure tries it again
            self._next_attempt = time.monotonic() + float(mcp_settings.AUDIT_REPLAY_INTERVAL)
        self._update_refusing()

    def _update_refusing(self) -> None:
        full = self._spool is not None and self._spool.size >= int(mcp_settings.AUDIT_SPOOL_MAX_BYTES)
        self.refusing = mcp_settings.AUDIT_WHEN_FULL == "refuse" and (self._spool_broken or full)

    def _own_spool(self) -> Spool:
        directory = self._spool_dir()
        if self._spool is None or self._spool.directory != directory:
            if self._spool is not None:
                self._spool.close()  # its rows, if any, are another process's orphans now: anyone replays them
            self._spool = Spool(directory)
        return self._spool

    @staticmethod
    def _spool_dir() -> Path:
        return Path(mcp_settings.AUDIT_SPOOL_DIR)

    def _resolve(self, batch: Iterable[_Pending], outcome: str, *, count: bool = False) -> None:
        for pending in batch:
            if count:
                self.dropped += 1
            with contextlib.suppress(concurrent.futures.InvalidStateError):  # a cancelled caller
                pending.done.set_result(outcome)

    def _after_fork(self) -> None:
        """In a forked child: a writer of its own (the parent's thread, queue and spool lock stay the parent's)."""
        if self._spool is not None and self._spool._fd is not None:
            os.close(self._spool._fd)  # the parent keeps its lock: it holds a descriptor of its own
        self._reset()


def _tidy_connection() -> None:
    """Keep the writer's connection between batches, as `CONN_MAX_AGE` allows, and drop a broken one.

    The writer is one long-lived thread, not a request: with `CONN_MAX_AGE = 0` it keeps its connection
    (reconnecting per batch costs more than the batch; on SQLite in WAL mode closing the last connection
    even checkpoints). A positive `CONN_MAX_AGE` still bounds the connection's age.
    """
    from mcp_django.models import ToolCallRecord

    connection = connections[router.db_for_write(ToolCallRecord)]
    if connection.settings_dict.get("CONN_MAX_AGE") != 0:
        connection.close_if_unusable_or_obsolete()
    elif connection.errors_occurred and connection.connection is not None and not connection.is_usable():
        connection.close()


def _write_chunks(rows: Sequence[dict[str, Any]]) -> None:
    for start in range(0, len(rows), BATCH_SIZE):
        _write(rows[start : start + BATCH_SIZE], dedupe=True)


def _write(rows: Sequence[dict[str, Any]], *, dedupe: bool) -> None:
    """Insert `rows` in one transaction (with `dedupe`, leaving out the ones already there).

    Raises:
        _Unavailable: the database could not take them; nothing was written.
    """
    from mcp_django.models import ToolCallRecord  # models need the app registry, ready only later

    alias = router.db_for_write(ToolCallRecord)
    try:
        with transaction.atomic(using=alias):
            _bound_the_wait(alias)
            if dedupe:
                rows = _missing(ToolCallRecord, alias, rows)
            ToolCallRecord.objects.using(alias).bulk_create([ToolCallRecord(**row) for row in rows])
    except (IntegrityError, DataError):
        _write_one_by_one(ToolCallRecord, alias, rows)
    except DatabaseError as exc:
        with contextlib.suppress(Exception):
            connections[alias].close()  # a read-only or broken connection is not reused once the database is back
        raise _Unavailable(str(exc) or type(exc).__name__) from exc


def _missing(model: Any, alias: str, rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows whose (trace_id, origin) is neither in the database nor earlier in `rows`."""
    seen = set(
        model.objects.using(alias)
        .filter(trace_id__in={row["trace_id"] for row in rows})
        .values_list("trace_id", "origin")
    )
    missing = []
    for row in rows:
        key = (row["trace_id"], row["origin"])
        if key not in seen:
            seen.add(key)
            missing.append(row)
    return missing


def _write_one_by_one(model: Any, alias: str, rows: Sequence[dict[str, Any]]) -> None:
    """A batch the database rejected as data: keep every row it takes (a deleted user becomes none)."""
    for row in rows:
        for attempt in (row, {**row, "user_id": None}):
            try:
                with transaction.atomic(using=alias):
                    model.objects.using(alias).create(**attempt)
                break
            except (IntegrityError, DataError):
                continue
        else:
            logger.error("The database rejected an audit record: %r", row)


def _bound_the_wait(alias: str) -> None:
    """Wait at most `AUDIT_DB_TIMEOUT` seconds for a lock in this transaction (SQLite and PostgreSQL)."""
    connection = connections[alias]
    milliseconds = max(1, int(float(mcp_settings.AUDIT_DB_TIMEOUT) * 1000))
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute(f"PRAGMA busy_timeout = {milliseconds}")
        elif connection.vendor == "postgresql":
            cursor.execute("SELECT set_config('lock_timeout', %s, true)", [f"{milliseconds}ms"])
            cursor.execute("SELECT set_config('statement_timeout', %s, true)", [f"{milliseconds}ms"])


_writer = AuditWriter()
os.register_at_fork(after_in_child=_writer._after_fork)


def audit_writer() -> AuditWriter:
    """The process's audit writer."""
    return _writer


def audit_status() -> AuditStatus:
    """The audit trail of this process: rows dropped, rows waiting in the spool, whether calls are refused."""
    return _writer.status()


def replay_leftovers() -> None:
    """Start the writer now if the spool holds rows, so they reach the database without waiting for a call."""
    try:
        leftovers = Spool(Path(mcp_settings.AUDIT_SPOOL_DIR)).has_orphans()
    except Exception:  # a wrong setting is a system check's to report, not start-up's to crash on
        logger.exception("Could not look for audit records left in the spool")
        return
    if leftovers:
        _writer.start()


def flush_audit_log(timeout: float = 5.0) -> bool:
    """Wait until every audit record handed over so far is stored; False on timeout."""
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
    the tool received: after every request-phase mutation, redaction included. The reply waits
    until the row is committed, or spooled while the database is unavailable.
    """

    name = "audit"
    description = "Stores every tool call in the audit trail"
    events = ("tools/call",)
    phases = ("response",)
    Options = AuditOptions

    def __init__(self) -> None:
        audit_writer().start()  # replays what an earlier process left in the spool, without waiting for a call

    def admits(self, event: str) -> None:
        if _writer.refusing:
            raise AuditUnavailable()

    async def record(self, invocation: Invocation) -> SinkResult:
        context = invocation.context
        request = context.request or {}
        options: AuditOptions = invocation.options
        user = context.user if context.principal.get("type") == "user" else None
        arguments = request.get("arguments") if options.record_arguments else None
        stored = await asyncio.wrap_future(
            audit_writer().submit(
                {
                    "user_id": getattr(user, "pk", None),
                    "endpoint": context.endpoint or "",
                    "tool": str(request.get("name", ""))[:128],
                    "arguments": arguments if isinstance(arguments, dict) else {},
                    "outcome": context.outcome or "ok",
                    "duration_ms": round(context.duration_ms or 0.0, 3),
                    "origin": options.origin,
                    "trace_id": context.trace_id or uuid.uuid4().hex,
                    "created": datetime.fromisoformat(context.timestamp) if context.timestamp else datetime.now(UTC),
                }
            )
        )
        return SinkResult(recorded=stored != DROPPED, info={"stored": stored})
