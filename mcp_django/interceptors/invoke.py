"""Calling interceptors: one at a time (`invoke`, bounded by its timeout, whatever happens turned
into an `InvocationRecord`), or several concurrently (`gather_eagerly`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import sys
import time
from collections.abc import Coroutine, Sequence
from typing import Any, Final, TypeVar

from mcp_django.interceptors.base import Invocation, MutationResult, SinkResult, ValidationResult
from mcp_django.interceptors.config import PlanEntry
from mcp_django.protocol.coroutines import resume

T = TypeVar("T")

# Results are frozen, so the common verdicts are shared instead of built on every invocation.
VALID: Final = ValidationResult(valid=True)
INVALID: Final = ValidationResult(valid=False)
_RECORDED: Final = SinkResult(recorded=True)
_NOT_RECORDED: Final = SinkResult(recorded=False)
_clock: Final = time.perf_counter
logger = logging.getLogger("mcp_django.interceptors")


@dataclasses.dataclass(frozen=True, slots=True)
class InvocationRecord:
    """What one invocation gave: its result, or why it failed (an exception, a timeout, a malformed result)."""

    interceptor: str
    type: str
    phase: str
    mode: str
    result: ValidationResult | MutationResult | SinkResult | None
    error: str | None = None
    duration_ms: float = 0.0

    @property
    def timed_out(self) -> bool:
        return self.error == "timeout"


EAGER_TASKS: Final = sys.version_info >= (3, 12)
"""Whether `asyncio.Task` takes `eager_start`: a task that runs its first step at once, as itself."""


async def in_eager_tasks(coroutines: Sequence[Coroutine[Any, Any, T]]) -> list[T]:
    """Run coroutines concurrently, each in a task of its own from its first step (Python 3.12+).

    Like `gather_eagerly`, a coroutine that finishes without waiting is done at once, with no trip
    through the event loop; unlike it, each one runs in its own task from the start, so one that enters
    `asyncio.timeout()` (as `asyncio.wait_for` does from 3.12 on) or a `TaskGroup` before it first
    waits finds the same task when it resumes. Cancelling the caller cancels every one still running.
    """
    loop = asyncio.get_running_loop()
    tasks = [asyncio.Task(coroutine, loop=loop, eager_start=True) for coroutine in coroutines]  # type: ignore[call-arg]
    try:
        return [task.result() if task.done() else await task for task in tasks]
    except BaseException:
        for task in tasks:
            task.cancel()
        raise


async def gather_eagerly(coroutines: Sequence[Coroutine[Any, Any, T]]) -> list[T]:
    """Run coroutines concurrently, like `asyncio.gather`, but start each one at once in the current task.

    Most interceptors finish without ever waiting (a regex, a dict lookup): those complete right here,
    with no task and no trip through the event loop. Only a coroutine that really suspends is handed,
    from the point where it suspended, to a task of its own. Cancelling the caller cancels every
    coroutine still running, as with `gather`.

    A coroutine that captured the current task in its first step (`asyncio.timeout()`, a `TaskGroup`)
    would find another one when it resumes: the chain uses `in_eager_tasks` where Python has eager
    tasks (3.12+), and this on 3.11, whose `asyncio.wait_for` captures no task.
    """
    results: list[Any] = [None] * len(coroutines)
    suspended: list[tuple[int, _Resumed]] = []
    for index, coroutine in enumerate(coroutines):
        try:
            awaited = coroutine.send(None)
        except StopIteration as finished:
            results[index] = finished.value
        else:
            suspended.append((index, _Resumed(coroutine, awaited)))
    try:
        for index, resumed in suspended:
            results[index] = await resumed.task
    except BaseException:
        for _, resumed in suspended:
            resumed.cancel()
        raise
    return results


class _Resumed:
    """A coroutine that suspended while started eagerly, carried on by a task from where it stopped."""

    def __init__(self, coroutine: Coroutine[Any, Any, Any], awaited: Any) -> None:
        self.coroutine = coroutine
        self.started = False
        self.task: asyncio.Future[Any] = asyncio.ensure_future(self._carry_on(awaited))

    async def _carry_on(self, awaited: Any) -> Any:
        self.started = True
        return await resume(self.coroutine, awaited)

    def cancel(self) -> None:
        self.task.cancel()
        if not self.started:
            # The task will never run, so the coroutine would stay suspended: cancel it where it waits.
            self.task.add_done_callback(lambda _: _throw_cancel(self.coroutine))


def _throw_cancel(coroutine: Coroutine[Any, Any, Any]) -> None:
    try:
        coroutine.throw(asyncio.CancelledError())
    except (asyncio.CancelledError, StopIteration):
        return
    except BaseException:
        logger.debug("A cancelled interceptor raised while being cancelled", exc_info=True)
        return
    coroutine.close()  # it swallowed the cancellation and waited again: stop it for good


Outcome = tuple[PlanEntry, "ValidationResult | MutationResult | SinkResult | None", "str | None", float]
"""What one invocation gave, compactly: (entry, result, error, duration in ms); `record()` makes the record."""


def record(outcome: Outcome, phase: str) -> InvocationRecord:
    """The `InvocationRecord` of an outcome (built only when someone reads it)."""
    entry, result, error, duration = outcome
    return InvocationRecord(entry.name, entry.type, phase, entry.mode, result, error, duration)


async def invoke(entry: PlanEntry, invocation: Invocation, timeout_ms: int | None) -> InvocationRecord:
    """Call one interceptor, bounded by `timeout_ms`, and turn whatever happens into a record.

    A mutator is handed a copy of the payload: `modified=False` must return the payload unchanged.
    """
    original = invocation.payload
    if entry.type == "mutation":
        invocation = dataclasses.replace(invocation, payload=copy_json(original))
    outcome = await attempt(entry, invocation, timeout_ms)
    if entry.type == "mutation":
        outcome = unmodified_checked(outcome, invocation, original)
    return record(outcome, invocation.phase)


def start(entry: PlanEntry, invocation: Invocation) -> Outcome | Coroutine[Any, Any, Outcome]:
    """Call one interceptor with its own timeout: its outcome, or a coroutine to await for it.

    Without a timeout the interceptor is started right here: one that finishes without waiting
    (most do) gives its outcome at once, with no coroutine of ours around it; one that waits is
    carried on, from where it stopped, by the coroutine returned. A mutation's `modified=False` is
    not checked here (`unmodified_checked`): the chain first undoes what a mutator changed in place.
    """
    if entry.timeout_ms is not None:
        return attempt(entry, invocation, entry.timeout_ms)
    started = _clock()
    try:
        coroutine = entry.call(invocation)
        awaited = coroutine.send(None)  # type: ignore[attr-defined]  # entry.call makes a coroutine
    except StopIteration as finished:
        raw = finished.value
        if (raw is True and entry.type == "validation") or (raw is None and entry.type == "sink"):
            # the common verdicts, shared and without a call
            return (entry, VALID if raw else _RECORDED, None, (_clock() - started) * 1000)
        return _settle(entry, invocation, raw, started)
    except Exception as exc:
        return _failure(entry, invocation, exc, None, started)
    return _carry_on(entry, invocation, coroutine, awaited, started)  # type: ignore[arg-type]


async def attempt(entry: PlanEntry, invocation: Invocation, timeout_ms: int | None) -> Outcome:
    """Call one interceptor, bounded by `timeout_ms`, and return its outcome."""
    started = _clock()
    try:
        outcome = entry.call(invocation)
        raw = await (outcome if timeout_ms is None else asyncio.wait_for(outcome, timeout_ms / 1000))
    except Exception as exc:
        return _failure(entry, invocation, exc, timeout_ms, started)
    return _settle(entry, invocation, raw, started)


async def _carry_on(
    entry: PlanEntry, invocation: Invocation, coroutine: Coroutine[Any, Any, Any], awaited: Any, started: float
) -> Outcome:
    try:
        raw = await resume(coroutine, awaited)
    except Exception as exc:
        return _failure(entry, invocation, exc, None, started)
    return _settle(entry, invocation, raw, started)


def _settle(entry: PlanEntry, invocation: Invocation, raw: Any, started: float) -> Outcome:
    """The outcome of an interceptor that returned `raw`."""
    try:
        result = _as_result(entry, raw)
    except Exception as exc:
        return _failure(entry, invocation, exc, None, started)
    return (entry, result, None, (_clock() - started) * 1000)


def unmodified_checked(outcome: Outcome, invocation: Invocation, original: dict[str, Any]) -> Outcome:
    """A mutation's outcome, failed when it says `modified=False` and returns a payload other than `original`."""
    entry, result, error, duration = outcome
    if error is not None or result.modified or result.payload is original:  # type: ignore[union-attr]  # a mutation
        return outcome
    try:
        if result.payload == original:  # type: ignore[union-attr]
            return outcome
        exc: Exception = TypeError("modified=False with a payload that differs from the input")
    except Exception as raised:  # a payload holding something whose == raises
        exc = raised
    return (entry, None, _logged(entry, invocation, exc, None), duration)


def _failure(
    entry: PlanEntry, invocation: Invocation, exc: Exception, timeout_ms: int | None, started: float
) -> Outcome:
    """The outcome of an interceptor that raised `exc` (or timed out), logged."""
    error = _logged(entry, invocation, exc, timeout_ms)
    return (entry, _NOT_RECORDED if entry.type == "sink" else None, error, (_clock() - started) * 1000)


def _logged(entry: PlanEntry, invocation: Invocation, exc: Exception, timeout_ms: int | None) -> str:
    """The record's `error` for an interceptor that raised `exc` (or timed out), logged."""
    if isinstance(exc, TimeoutError):
        logger.warning("Interceptor %r timed out after %s ms on %s", entry.name, timeout_ms, invocation.event)
        return "timeout"
    logger.warning("Interceptor %r failed on %s (%s)", entry.name, invocation.event, invocation.phase, exc_info=exc)
    return f"{type(exc).__name__}: {exc}"


def _as_result(entry: PlanEntry, raw: Any) -> ValidationResult | MutationResult | SinkResult:
    """Normalize what an interceptor returned, or raise `TypeError` for a result of the wrong kind."""
    if entry.type == "validation":
        if raw is True or raw is False:
            return VALID if raw else INVALID
        if isinstance(raw, ValidationResult):
            return raw
    elif entry.type == "mutation":
        if isinstance(raw, MutationResult):
            return raw
    else:
        if raw is None or raw is True:
            return _RECORDED
        if raw is False:
            return _NOT_RECORDED
        if isinstance(raw, SinkResult):
            return raw
        return _RECORDED
    raise TypeError(f"a {entry.type} interceptor returned {type(raw).__name__}")


def copy_json(value: Any) -> Any:
    """A deep copy of a JSON value (dicts, lists, scalars), much cheaper than `copy.deepcopy`."""
    if isinstance(value, dict):
        return {key: item if type(item) in _ATOMS else copy_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [item if type(item) in _ATOMS else copy_json(item) for item in value]
    return value


_ATOMS: Final = frozenset({str, int, float, bool, type(None)})
"""Values `copy_json` hands back as they are, without a call."""


class Loan:
    """A payload lent to mutators instead of a copy each: what each of its dicts and lists held when lent.

    `changed()` tells (in one comparison) whether a mutator changed any of them in place, and
    `restore()` puts every one back as it was, in place, so that whoever else holds the payload or
    a part of it (the caller, an earlier mutator's record) never sees what a mutator did to it: as if
    the mutator had been handed a copy. Values that compare equal count as unchanged (`1` for `1.0`),
    as in the `modified=False` check. Only dicts and lists are watched, as only they are copied by
    `copy_json`.
    """

    __slots__ = ("containers", "contents")

    def __init__(self, payload: Any) -> None:
        self.containers: list[Any] = []
        self.contents: list[Any] = []
        self._take(payload)

    def _take(self, value: Any) -> None:
        if isinstance(value, dict):
            self.containers.append(value)
            self.contents.append(dict(value))
            for item in value.values():
                if type(item) not in _ATOMS:
                    self._take(item)
        elif isinstance(value, list):
            self.containers.append(value)
            self.contents.append(list(value))
            for item in value:
                if type(item) not in _ATOMS:
                    self._take(item)

    def changed(self) -> bool:
        """True when some dict or list of the payload no longer holds what it held when lent."""
        return self.containers != self.contents

    def restore(self) -> None:
        """Put every dict and list of the payload back as it was when lent (the same objects, in place)."""
        for container, content in zip(self.containers, self.contents, strict=True):
            if isinstance(container, dict):
                container.clear()
                container.update(content)
            else:
                container[:] = content
