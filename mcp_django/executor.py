"""Where sync code runs when an async transport needs it (a stub: the authcache work replaces it).

`dedicated_threads()` marks a request served outside Django's request cycle (the ASGI fast path);
`run_sync` behaves as `sync_to_async(thread_sensitive=True)` until the long-lived pool lands.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator
from typing import ParamSpec, TypeVar

from asgiref.sync import sync_to_async

__all__ = ["dedicated_threads", "run_sync", "uses_dedicated_threads"]

P = ParamSpec("P")
R = TypeVar("R")

_dedicated: contextvars.ContextVar[bool] = contextvars.ContextVar("mcp_django.dedicated_threads", default=False)


@contextlib.contextmanager
def dedicated_threads(enabled: bool = True) -> Iterator[None]:
    """Run the `run_sync` calls of this block (and of tasks it starts) on the long-lived database threads."""
    token = _dedicated.set(enabled)
    try:
        yield
    finally:
        _dedicated.reset(token)


def uses_dedicated_threads() -> bool:
    """True when `run_sync` here would use the long-lived threads."""
    return _dedicated.get()


async def run_sync(fn: Callable[P, R], /, *args: P.args, **kwargs: P.kwargs) -> R:
    """Call the sync `fn(*args, **kwargs)` off the event loop and return what it returns."""
    return await sync_to_async(fn, thread_sensitive=True)(*args, **kwargs)
