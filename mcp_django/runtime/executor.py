"""Where sync code (the ORM, sync tools and providers) runs when an async transport needs it.

`await run_sync(fn, *args, **kwargs)` is the one way the package calls sync code from async code.
What it does depends on who serves the request:

- Inside Django's own request cycle (the Django view under ASGI, the test `Client`, a management
  command) it is `asgiref.sync.sync_to_async(fn, thread_sensitive=True)`: the request's sync
  thread, so a test's transaction (pytest-django) sees the test's rows, as Django expects.
- Where a transport marks the request with `dedicated_threads()` (the ASGI fast path, which has no
  request thread of its own) it runs on a bounded pool of long-lived threads,
  `MCP_DJANGO["DATABASE_THREADS"]` of them. Each keeps its database connection between jobs, so
  a request does not open one; `close_old_connections()` runs before and after every job, as
  Django runs it around a request, so `CONN_MAX_AGE` and broken connections are handled.
  Connections live only as long as `CONN_MAX_AGE` allows (Django's default, 0, closes them after
  every job): set it (`docs/settings.md`).
- Where a transport marks the request with `calling_thread()` (the WSGI fast path, whose request
  thread runs the request's event loop and nothing else) it runs right there, on the calling
  thread: no hand-over. The loop waits meanwhile, so a time limit that passes while such sync code
  runs is noticed when it returns (the call answers the timeout, as on a thread).

This module imports no Django until a job runs, so declarations and providers (imported with the
package, before settings exist) can use it.

A job started from a pool thread (sync code calling `async_to_sync` that calls `run_sync`) runs
the Django way, so nested calls never wait for a pool slot they hold themselves.

Sync code cannot be stopped from outside its thread. When the coroutine awaiting it is cancelled (a
tool's time limit passed, the client went away, the server shuts down) the caller gets its answer at
once and the thread is left to finish; a job still queued never starts. The log says when abandoned
code finally returns. At interpreter exit, jobs still running get `MCP_DJANGO["SHUTDOWN_GRACE"]`
seconds to finish; past it the process runs its `atexit` handlers and exits with status
`ABANDONED_EXIT_STATUS` instead of waiting for them (docs/deployment.md).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import contextvars
import functools
import logging
import os
import queue
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, Final, Generic, ParamSpec, TypeVar

from asgiref.sync import SyncToAsync, sync_to_async

from mcp_django.runtime.first_use import first_use
from mcp_django.runtime.package_settings import package_settings

logger = logging.getLogger("mcp_django.runtime.executor")

P = ParamSpec("P")
R = TypeVar("R")

THREAD_NAME_PREFIX: Final = "mcp_django-db"

ABANDONED_EXIT_STATUS: Final = 1
"""The exit status of a process that left sync code running when it exited (past `SHUTDOWN_GRACE`)."""

POOL: Final = "pool"
CALLING_THREAD: Final = "calling thread"

_where: contextvars.ContextVar[str | None] = contextvars.ContextVar("mcp_django.sync_code_runs_on", default=None)
"""Where `run_sync` runs sync code here: None (Django's way), `POOL` or `CALLING_THREAD` (set by the fast paths)."""

LATE_CHECK_AFTER: Final = 0.001
"""Seconds sync code on the calling thread runs before the loop is let notice a time limit that passed meanwhile."""


@contextlib.contextmanager
def dedicated_threads(enabled: bool = True) -> Iterator[None]:
    """Run the `run_sync` calls of this block (and of tasks it starts) on the long-lived database threads.

    The ASGI fast path wraps each request it serves in it; code inside Django's request cycle never does.
    """
    token = _where.set(POOL if enabled else None)
    try:
        yield
    finally:
        _where.reset(token)


def calling_thread() -> None:
    """From now on in this context, run `run_sync` calls on the calling thread itself (no hand-over).

    For a context whose event loop serves one request on a thread of its own (the WSGI fast path):
    blocking that loop blocks nobody else.
    """
    _where.set(CALLING_THREAD)


def uses_dedicated_threads() -> bool:
    """True when `run_sync` here would use the long-lived threads."""
    return _where.get() == POOL


async def run_sync(fn: Callable[P, R], /, *args: P.args, **kwargs: P.kwargs) -> R:
    """Call the sync `fn(*args, **kwargs)` off the event loop and return what it returns (or raise what it raises).

    On the long-lived database threads under `dedicated_threads()`, else exactly as
    `sync_to_async(fn, thread_sensitive=True)` would (see the module docstring). Cancelled, it
    returns at once; `fn`, if it started, runs on to its end in its thread.

    Raises:
        ServiceUnavailable: `fn` raised a database error that means "unavailable now"
            (`mcp_django.runtime.unavailable`); anything else `fn` raises passes through.
    """
    job: _Job[R] = _Job(fn, args, kwargs)
    try:
        where = _where.get()
        if where is None:
            return await sync_to_async(job.run, thread_sensitive=True)()
        if where == CALLING_THREAD:
            return await _run_here(job)
        loop = asyncio.get_running_loop()
        future: asyncio.Future[R] = loop.create_future()
        _executor().submit(loop, future, contextvars.copy_context(), job)
        return await future
    except asyncio.CancelledError:
        job.abandon()
        raise
    except Exception as exc:
        from mcp_django.runtime.unavailable import database_unavailable, is_database_unavailable

        if is_database_unavailable(exc):
            raise database_unavailable(exc) from exc
        raise


async def _run_here(job: _Job[R]) -> R:
    """Run `job` on this thread, which runs the event loop: sync code there sees a plain sync thread."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    token = _where.set(None)  # sync code calling `async_to_sync` that calls `run_sync`: the Django way
    asyncio._set_running_loop(None)  # so `async_to_sync` in it works, as on any WSGI request's thread
    try:
        result = job.run()
    finally:
        asyncio._set_running_loop(loop)
        _where.reset(token)
    if loop.time() - started >= LATE_CHECK_AFTER:
        # Let the loop fire the timers that came due meanwhile: a time limit that passed cancels this
        # task here (its timer is due before this sleep's), and the call answers the timeout.
        await asyncio.sleep(LATE_CHECK_AFTER / 1000)
    return result


class _Job(Generic[R]):
    """One call of sync code: counted while it runs, so shutdown knows what it would wait for."""

    __slots__ = ("abandoned", "args", "fn", "kwargs", "started")

    def __init__(self, fn: Callable[..., R], args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        self.fn = fn
        self.args = args
        self.kwargs = kwargs
        self.started = 0.0
        self.abandoned = 0.0

    def run(self) -> R:
        self.started = time.monotonic()
        with _running_lock:
            _running[0] += 1
        outer, _current.job = getattr(_current, "job", None), self
        try:
            return self.fn(*self.args, **self.kwargs)
        finally:
            _current.job = outer
            with _running_lock:
                _running[0] -= 1
            if self.abandoned:
                logger.warning(
                    "%s returned %.1f s after its caller stopped waiting (%.1f s in all)",
                    _name(self.fn),
                    time.monotonic() - self.abandoned,
                    time.monotonic() - self.started,
                )

    def run_on_pool(self, loop: asyncio.AbstractEventLoop) -> R:
        close_old_connections = _close_old_connections()
        _where.set(None)  # in this job's own context: a nested run_sync does not wait for a pool slot
        # `async_to_sync` finds the loop to run coroutines on in this thread-local, which asgiref's own
        # sync_to_async threads set. Without it, sync code calling async code (`ctx.elicit_sync`) would
        # get a new loop of its own, far from the request's streams and futures, and wait forever.
        local = SyncToAsync.threadlocal
        local.main_event_loop, local.main_event_loop_pid = loop, os.getpid()
        close_old_connections()
        try:
            return self.run()
        finally:
            close_old_connections()
            local.main_event_loop = local.main_event_loop_pid = None

    def abandon(self) -> None:
        if self.started:
            self.abandoned = time.monotonic()
            logger.warning(
                "%s abandoned after %.1f s: its caller stopped waiting, and its thread runs on until it returns",
                _name(self.fn),
                self.abandoned - self.started,
            )


_current = threading.local()
"""`job`: the `_Job` this thread runs now (None between jobs)."""


def abandoned() -> bool:
    """True when the caller of the sync code running on this thread stopped waiting for it (time limit, cancel)."""
    job = getattr(_current, "job", None)
    return job is not None and bool(job.abandoned)


def innermost(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The code a chain of partials runs: through each partial, the first callable it was given."""
    while isinstance(fn, functools.partial):
        fn = next((argument for argument in fn.args if callable(argument)), fn.func)
    return fn


def _name(fn: Callable[..., Any]) -> str:
    """The dotted name of the code a job runs: through partials, the first callable they were given."""
    fn = innermost(fn)
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', type(fn).__qualname__)}"


_running = [0]
_running_lock = threading.Lock()


def running_jobs() -> int:
    """How many `run_sync` calls of this process are running sync code right now (abandoned ones included)."""
    return _running[0]


def _exit_within_grace() -> None:
    """At interpreter exit, before threads are joined: give running sync code the grace period, then leave it.

    Python joins every non-daemon thread before it exits, and a thread running sync code cannot be
    stopped, so without this one runaway tool keeps a stopped server's process alive forever.
    """
    if not _running[0]:
        return
    try:
        from mcp_django.conf import mcp_settings

        grace = float(mcp_settings.SHUTDOWN_GRACE)
    except Exception:  # settings unreadable this late: the default
        grace = 5.0
    deadline = time.monotonic() + grace
    while _running[0] and time.monotonic() < deadline:
        time.sleep(0.05)
    if not _running[0]:
        return
    logger.error("Exiting with %d sync job(s) still running after the %.1f s shutdown grace period", _running[0], grace)
    atexit._run_exitfuncs()  # what a normal exit runs after the joins: the audit trail's flush, logging's
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(ABANDONED_EXIT_STATUS)


class _Pool:
    """Long-lived threads that run jobs from one queue, each result handed back with one `call_soon_threadsafe`.

    Cheaper than `loop.run_in_executor` on a `ThreadPoolExecutor` (`benchmarks/bench_executor.py`: about
    half the CPU per job with 16 callers), which builds a `concurrent.futures.Future` per job, chains it to
    an asyncio one and counts idle threads with a `threading.Semaphore`; handing back a batch of results
    per wake-up of the loop measured no cheaper than this once the job itself is counted. Same contract
    as that executor: a thread is started only when none is idle, up to `size`; a job whose caller was
    cancelled while it was queued never starts; `stop()` lets queued jobs run, then ends the threads.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self._queue: queue.SimpleQueue[tuple[Any, ...] | None] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._idle: list[None] = []
        """One entry per thread that finished a job and has not been promised another: `append` and `pop`
        are atomic, which is all the semaphore gave."""

    def submit(
        self, loop: asyncio.AbstractEventLoop, future: asyncio.Future[Any], context: Any, job: _Job[Any]
    ) -> None:
        """Queue `job` to run in `context`; its outcome is set on `future`, from `loop`."""
        self._queue.put((loop, future, context, job))
        try:
            self._idle.pop()
        except IndexError:
            if len(self._threads) < self.size:
                thread = threading.Thread(target=self._work, name=f"{THREAD_NAME_PREFIX}_{len(self._threads)}")
                self._threads.append(thread)
                thread.start()

    def stop(self) -> None:
        """End every thread once the jobs queued before now have run."""
        for _ in self._threads:
            self._queue.put(None)

    def _work(self) -> None:
        get, idle = self._queue.get, self._idle
        while (item := get()) is not None:
            loop, future, context, job = item
            del item
            if not future.cancelled():  # cancelled while queued: never starts
                try:
                    outcome = (future, True, context.run(job.run_on_pool, loop))
                except BaseException as exc:  # handed to the caller, as the pool's futures did
                    outcome = (future, False, exc)
                with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody is waiting
                    loop.call_soon_threadsafe(_deliver, *outcome)
                del outcome  # drop the result now, not when the next job arrives
            del future
            idle.append(None)


def _deliver(future: asyncio.Future[Any], ok: bool, value: Any) -> None:
    if future.done():  # its caller was cancelled while the job ran
        return
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)


_pool: _Pool | None = None


def _stop_pool() -> None:
    if _pool is not None:
        _pool.stop()


# Called before the interpreter joins its threads (atexit handlers run only after), latest first: so
# _exit_within_grace gives running jobs their grace first, then the pool's threads are told to end
# (after the jobs still queued, as concurrent.futures' own hook did) and can be joined.
threading._register_atexit(_stop_pool)  # type: ignore[attr-defined]  # the stdlib's, since 3.9
threading._register_atexit(_exit_within_grace)  # type: ignore[attr-defined]


_close_old_connections: Callable[[], Callable[[], None]] = first_use("django.db", "close_old_connections")
"""Django's `close_old_connections` (the runtime may be imported before Django is set up)."""


def database_threads() -> int:
    """How many long-lived threads the pool has: `MCP_DJANGO["DATABASE_THREADS"]`."""
    return int(package_settings().DATABASE_THREADS)


def _executor() -> _Pool:
    """The pool, made on first use and made again when `DATABASE_THREADS` changes (queued jobs still run)."""
    global _pool
    size = database_threads()
    if _pool is None or _pool.size != size:
        old, _pool = _pool, _Pool(size)
        if old is not None:
            old.stop()
    return _pool
