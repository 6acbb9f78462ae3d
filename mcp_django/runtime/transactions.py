"""Tool calls as units of work, like views: atomic on every database whose `ATOMIC_REQUESTS` is true.

Django wraps a sync view in `transaction.atomic` on each such database (`BaseHandler.make_view_atomic`);
mcp_django does the same for a sync tool's call, on the thread that runs it (the executor's database
thread, or the request's sync thread), on every transport. The call's own failure rolls it back: an
exception (a `ToolError` too), a result marked `isError`, or its caller no longer waiting (a time limit
passed: the thread runs on, and what it wrote is rolled back when it ends). `@tool(atomic=False)` opts
a tool out, as `transaction.non_atomic_requests` does a view, and that decorator on the function is
honoured per database. `@tool(atomic=True)` opts one tool in without `ATOMIC_REQUESTS` for the whole
site: its call is atomic on the `default` database (or those `using=` names) besides the
`ATOMIC_REQUESTS` ones. An async tool is never wrapped: Django's transactions are per thread, and Django
refuses `ATOMIC_REQUESTS` for async views. The audit row is written by the interceptor chain, outside
the call, so a rolled-back call still leaves its row.

Which databases those are is decided once per set of opted-out aliases, not on every call, and decided
again when a test changes `DATABASES` (`override_settings` sends `setting_changed`; code that edits
`connections.settings` in place sends it itself, as `tests/test_transactions.py` does).

A call sent with an idempotency key (`mcp_django.safety.idempotency`) carries a `Settlement`: when the
call is atomic on the database the key's row lives in, its result is written there inside the call's
transaction, after the call succeeded and before the commit, so the two commit or roll back together.

This module imports no Django until a call runs.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

from mcp_django.runtime.executor import abandoned, innermost

R = TypeVar("R")


class Settlement:
    """Where a keyed call's result is kept, inside the call's own transaction when it runs in one there.

    Args:
        database: the alias of the database the result is written to.
        keep: writes a `CallToolResult` (on the call's thread, in its transaction).
    """

    __slots__ = ("convert", "database", "keep", "kept", "skip")

    def __init__(self, database: str, keep: Callable[[dict[str, Any]], None]) -> None:
        self.database = database
        self.keep = keep
        self.convert: Callable[[Any], dict[str, Any]] | None = None
        """The return value -> `CallToolResult` conversion, set by the declaration that runs the call."""
        self.skip = False
        """True for a call whose result is not kept (a tool declared idempotent)."""
        self.kept = False

    def settle(self, value: Any, aliases: Sequence[str]) -> None:
        """Keep the result of `value` when the call's transaction spans the result's database."""
        if self.convert is not None and not self.skip and self.database in aliases:
            self.keep(self.convert(value))
            self.kept = True


settlement: contextvars.ContextVar[Settlement | None] = contextvars.ContextVar(
    "mcp_django.runtime.transactions.settlement", default=None
)
"""The `Settlement` of the call being run, set around a keyed `tools/call`; None for any other."""


_decided: dict[frozenset[str], tuple[str, ...]] = {}
"""`atomic_databases` per set of excluded aliases, until `DATABASES` changes."""


def atomic_databases(excluded: Iterable[str] = ()) -> tuple[str, ...]:
    """The aliases of the databases whose `ATOMIC_REQUESTS` is true, less `excluded`."""
    skip = excluded if isinstance(excluded, frozenset) else frozenset(excluded)
    aliases = _decided.get(skip)
    if aliases is None:
        from django.core.signals import setting_changed
        from django.db import connections

        setting_changed.connect(_databases_changed, dispatch_uid="mcp_django.runtime.transactions")
        aliases = _decided[skip] = tuple(
            alias for alias, db in connections.settings.items() if db.get("ATOMIC_REQUESTS") and alias not in skip
        )
    return aliases


def _databases_changed(*, setting: str, **kwargs: Any) -> None:
    if setting == "DATABASES":
        _decided.clear()


def run_atomically(fn: Callable[..., R], failed: Callable[[R], bool], /, *args: Any, **kwargs: Any) -> R:
    """`fn(*args, **kwargs)` in `transaction.atomic` on each `ATOMIC_REQUESTS` database, rolled back on failure.

    Args:
        fn: the sync call (run on this thread); its `_non_atomic_requests` aliases are left out.
        failed: True for a return value that is a failure (an `isError` result): rolled back too.
    """
    return _run((), fn, failed, *args, **kwargs)


def unit_of_work(atomic: bool | None, using: str | Sequence[str] | None = None) -> Callable[..., Any] | None:
    """How a declared call runs as a unit of work: a `run_atomically`-like callable, or None for outside one.

    Args:
        atomic: None follows `ATOMIC_REQUESTS`; True is atomic on `using` (default: `"default"`) too,
            whatever `ATOMIC_REQUESTS` says; False never opens a transaction.
        using: the database aliases `atomic=True` makes the call atomic on.
    """
    if atomic is False:
        return None
    if atomic is None:
        return run_atomically
    forced = (using,) if isinstance(using, str) else tuple(using or ("default",))
    return functools.partial(_run, forced)


def _run(forced: tuple[str, ...], fn: Callable[..., R], failed: Callable[[R], bool], /, *args: Any, **kwargs: Any) -> R:
    excluded = getattr(innermost(fn), "_non_atomic_requests", ())
    aliases = tuple(dict.fromkeys((*forced, *atomic_databases(excluded))))
    if not aliases:
        return fn(*args, **kwargs)
    from django.db import transaction

    with contextlib.ExitStack() as stack:
        for alias in aliases:
            stack.enter_context(transaction.atomic(using=alias))
        value = fn(*args, **kwargs)
        if failed(value) or abandoned():
            for alias in aliases:
                transaction.set_rollback(True, using=alias)
        elif (settling := settlement.get()) is not None:
            settling.settle(value, aliases)
        return value
