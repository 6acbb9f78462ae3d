"""Driving a coroutine by hand: started in place, and carried on by the task that awaits `resume()` once it waits.

A coroutine started with `send(None)` that finishes at once costs no task, no trip through the event
loop and no timer (an interceptor that checks a dict, a request body already received); one that
waits is handed to the awaiting task from the point where it stopped.
"""

from __future__ import annotations

import types
from collections.abc import Coroutine, Generator
from typing import Any


@types.coroutine
def resume(coroutine: Coroutine[Any, Any, Any], awaited: Any) -> Generator[Any, Any, Any]:
    """Drive a coroutine that already suspended on `awaited`, from within the task awaiting this."""
    while True:
        try:
            sent = yield awaited
        except BaseException as exc:  # cancellation and the like go down to the coroutine
            try:
                awaited = coroutine.throw(exc)
            except StopIteration as finished:
                return finished.value
        else:
            try:
                awaited = coroutine.send(sent)
            except StopIteration as finished:
                return finished.value
