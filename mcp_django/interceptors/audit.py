"""The audit trail: `AuditSinkInterceptor` stores every tool call as a `ToolCallRecord`, before the reply leaves.

The sink hands its row to `AuditWriter`, one long-lived thread per process, and waits until the
row is stored. The writer takes every row waiting when it is free and commits them in one
transaction (a group commit: concurrent calls share it; `mcp_django.interceptors.audit_store`), so a
call the client saw succeed is always in the trail. The rows of a batch awaited on one event loop are
answered with one wake-up of that loop.

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
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Final

from mcp_django.conf import mcp_settings
from mcp_django.interceptors.audit_store import BATCH_SIZE, Unavailable, tidy_connection, write_chunks, write_rows
from mcp_django.interceptors.base import Invocation, SinkInterceptor, SinkResult
from mcp_django.interceptors.spool import Spool, dump_row
from mcp_django.protocol import MCPError
from mcp_django.runtime.lazy_models import LazyModel, lazy_attributes

if TYPE_CHECKING:
    import pydantic

logger = logging.getLogger("mcp_django.interceptors")

COMMITTED: Final = "committed"
SPOOLED: Final = "spooled"
DROPPED: Final = "dropped"

ORIGIN_META: Final = "mcp_django/origin"
"""The key of a `tools/call`'s `params._meta` where a client says who made the call (`"app"`: an MCP App's view).

It is the client's claim, not a proof: any client can send it. The audit sink stores it as the row's
origin when it is one of `claimed_origins`.
"""


class AuditUnavailable(MCPError):
    """A tool call refused because its audit row could be stored nowhere (`AUDIT_WHEN_FULL = "refuse"`)."""

    default_message = "Tool calls are refused: the audit trail's database is unavailable and its spool is full."

    def __init__(self) -> None:
        super().__init__(data={"reason": "audit_unavailable"})


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
    done: concurrent.futures.Future[str] | asyncio.Future[str]


class AuditWriter:
    """Stores `ToolCallRecord` rows from one thread: group commits, the spool while the database is down, replay.

    Args:
        batch_size: the most rows one transaction takes.
    """

    def __init__(self, batch_size: int = BATCH_SIZE) -> None:
        self._batch_size = batch_size
        self._reset()

    def _reset(self) -> None:
        self._queue: queue.SimpleQueue[list[_Pending]] = queue.SimpleQueue()
        self._gathering: dict[asyncio.AbstractEventLoop, list[_Pending]] = {}
        self._carried: list[_Pending] = []
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
        """Hand over one row (keyword arguments of `ToolCallRecord`, with a `trace_id`), from any thread.

        Returns:
            A future resolved with `"committed"`, `"spooled"` or `"dropped"` once the writer is done with it.
        """
        done: concurrent.futures.Future[str] = concurrent.futures.Future()
        self._hand_over([_Pending(row, done)])
        return done

    def submit_async(self, row: dict[str, Any]) -> asyncio.Future[str]:
        """`submit` from a coroutine: a future of the running loop.

        The rows a loop submits in one pass of its ready callbacks are handed to the writer together,
        at the end of that pass (one wake-up of the writer, not one per row), and the rows of a batch
        awaited on one loop are answered by one callback on that loop.
        """
        loop = asyncio.get_running_loop()
        done: asyncio.Future[str] = loop.create_future()
        gathered = self._gathering.get(loop)
        if gathered is None:
            gathered = self._gathering[loop] = []
            loop.call_soon(self._hand_over_gathered, loop)
        gathered.append(_Pending(row, done))
        return done

    def _hand_over_gathered(self, loop: asyncio.AbstractEventLoop) -> None:
        self._hand_over(self._gathering.pop(loop))

    def _hand_over(self, rows: list[_Pending]) -> None:
        self.start()
        with self._idle:
            self._unfinished += len(rows)
        self._queue.put(rows)

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
                    tidy_connection()
                with self._idle:
                    self._unfinished -= len(batch)
                    self._idle.notify_all()

    def _take(self, timeout: float) -> list[_Pending]:
        """Every row waiting, up to a batch, after waiting at most `timeout` for the first ones."""
        batch, self._carried = self._carried, []
        if not batch:
            try:
                batch = list(self._queue.get(timeout=timeout))
            except queue.Empty:
                return []
        while len(batch) < self._batch_size:
            try:
                batch += self._queue.get_nowait()
            except queue.Empty:
                break
        batch, self._carried = batch[: self._batch_size], batch[self._batch_size :]  # the rest is the next batch
        return batch

    def _store(self, batch: list[_Pending]) -> None:
        if not self._down:
            try:
                write_rows([pending.row for pending in batch], dedupe=False)
            except Unavailable as exc:
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
                write_chunks(own)
                spool.clear_own()
                self._update_refusing()
                logger.warning("Audit database is available again: replayed %d spooled records", len(own))
            with spool.orphans() as orphans:
                for path, rows in orphans:
                    write_chunks(rows)
                    logger.warning("Replayed %d audit records from %s, left by another process", len(rows), path)
        except Unavailable as exc:
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
        by_loop: dict[asyncio.AbstractEventLoop, list[asyncio.Future[str]]] = {}
        for pending in batch:
            if count:
                self.dropped += 1
            done = pending.done
            if isinstance(done, asyncio.Future):
                by_loop.setdefault(done.get_loop(), []).append(done)
            else:
                with contextlib.suppress(concurrent.futures.InvalidStateError):  # a cancelled caller
                    done.set_result(outcome)
        for loop, futures in by_loop.items():
            with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits for these any more
                loop.call_soon_threadsafe(_settle, futures, outcome)

    def _after_fork(self) -> None:
        """In a forked child: a writer of its own (the parent's thread, queue and spool lock stay the parent's)."""
        if self._spool is not None and self._spool._fd is not None:
            os.close(self._spool._fd)  # the parent keeps its lock: it holds a descriptor of its own
        self._reset()


def _settle(futures: list[asyncio.Future[str]], outcome: str) -> None:
    """On the waiting loop: resolve a batch's futures (a cancelled caller's is left alone)."""
    for future in futures:
        if not future.done():
            future.set_result(outcome)


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


if TYPE_CHECKING:

    class AuditOptions(pydantic.BaseModel):
        origin: str
        claimed_origins: tuple[str, ...]
        record_arguments: bool


@LazyModel
def _audit_options() -> type[pydantic.BaseModel]:
    import pydantic  # here, not when the package loads: a management command pays none (issue 34)

    class AuditOptions(pydantic.BaseModel):
        """Options of `AuditSinkInterceptor`."""

        model_config = pydantic.ConfigDict(extra="forbid", frozen=True)

        origin: str = pydantic.Field("agent", max_length=32, description="Stored as the record's origin.")
        claimed_origins: tuple[Annotated[str, pydantic.StringConstraints(max_length=32)], ...] = pydantic.Field(
            ("app",),
            description='Origins a call may claim in params._meta["mcp_django/origin"], stored instead of origin.',
        )
        record_arguments: bool = pydantic.Field(True, description="Store the arguments (False stores {}).")

    return AuditOptions


__getattr__ = lazy_attributes(__name__, AuditOptions=_audit_options)  # made when first asked for (`LazyModel`)


def claimed_origin(request: Mapping[str, Any], options: AuditOptions) -> str:
    """The origin a call's `_meta` claims (`ORIGIN_META`) when the options accept it, else `options.origin`."""
    meta = request.get("_meta")
    claimed = meta.get(ORIGIN_META) if isinstance(meta, Mapping) else None
    return claimed if isinstance(claimed, str) and claimed in options.claimed_origins else options.origin


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
    Options = _audit_options  # AuditOptions, on first use
    invocable = False  # a row over the wire would be a row the caller wrote

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
        stored = await audit_writer().submit_async(
            {
                "user_id": getattr(user, "pk", None),
                "endpoint": context.endpoint or "",
                "tool": str(request.get("name", ""))[:128],
                "arguments": arguments if isinstance(arguments, dict) else {},
                "outcome": context.outcome or "ok",
                "duration_ms": round(context.duration_ms or 0.0, 3),
                "origin": claimed_origin(request, options),
                "trace_id": context.trace_id or uuid.uuid4().hex,
                "created": datetime.fromisoformat(context.timestamp) if context.timestamp else datetime.now(UTC),
            }
        )
        return SinkResult(recorded=stored != DROPPED, info={"stored": stored})
