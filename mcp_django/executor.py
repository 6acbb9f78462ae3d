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

This module imports no Django until a job runs, so declarations and providers (imported with the
package, before settings exist) can use it.

A job started from a pool thread (sync code calling `async_to_sync` that calls `run_sync`) runs
the Django way, so nested calls never wait for a pool slot they hold themselves.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Final, ParamSpec, TypeVar

from asgiref.sync import sync_to_async

__all__ = ["database_threads", "dedicated_threads", "run_sync", "uses_dedicated_threads"]

P = ParamSpec("P")
R = TypeVar("R")

THREAD_NAME_PREFIX: Final = "mcp_django-db"

_dedicated: contextvars.ContextVar[bool] = contextvars.ContextVar("mcp_django.dedicated_threads", default=False)
"""True while the current request runs outside Django's request cycle (set by the fast path)."""


@contextlib.contextmanager
def dedicated_threads(enabled: bool = True) -> Iterator[None]:
    """Run the `run_sync` calls of this block (and of tasks it starts) on the long-lived database threads.

    The ASGI fast path wraps each request it serves in it; code inside Django's request cycle never does.
    """
    token = _dedicated.set(enabled)
    try:
        yield
    finally:
        _dedicated.reset(token)


def uses_dedicated_threads() -> bool:
    """True when `run_sync` here would use the long-lived threads."""
    return _dedicated.get()


async def run_sync(fn: Callable[P, R], /, *args: P.args, **kwargs: P.kwargs) -> R:
    """Call the sync `fn(*args, **kwargs)` off the event loop and return what it returns (or raise what it raises).

    On the long-lived database threads under `dedicated_threads()`, else exactly as
    `sync_to_async(fn, thread_sensitive=True)` would (see the module docstring).
    """
    if not _dedicated.get():
        return await sync_to_async(fn, thread_sensitive=True)(*args, **kwargs)
    context = contextvars.copy_context()
    job = functools.partial(context.run, _job, fn, args, kwargs)
    return await asyncio.get_running_loop().run_in_executor(_executor(), job)


def _job(fn: Callable[..., R], args: tuple[Any, ...], kwargs: dict[str, Any]) -> R:
    from django.db import close_old_connections

    _dedicated.set(False)  # in this job's own context: a nested run_sync does not wait for a pool slot
    close_old_connections()
    try:
        return fn(*args, **kwargs)
    finally:
        close_old_connections()


_pool: tuple[int, ThreadPoolExecutor] | None = None


def database_threads() -> int:
    """How many long-lived threads the pool has: `MCP_DJANGO["DATABASE_THREADS"]`."""
    from mcp_django.conf import mcp_settings

    return int(mcp_settings.DATABASE_THREADS)


def _executor() -> ThreadPoolExecutor:
    """The pool, made on first use and made again when `DATABASE_THREADS` changes (queued jobs still run)."""
    global _pool
    size = database_threads()
    if _pool is None or _pool[0] != size:
        old, _pool = _pool, (size, ThreadPoolExecutor(max_workers=size, thread_name_prefix=THREAD_NAME_PREFIX))
        if old is not None:
            old[1].shutdown(wait=False)
    return _pool[1]
