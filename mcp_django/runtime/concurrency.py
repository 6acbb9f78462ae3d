"""Asking several things at once: a list waits for the slowest of its sources, not for all of them in turn."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence
from typing import TypeVar

T = TypeVar("T")


async def at_once(asked: Sequence[Awaitable[T]]) -> list[T]:
    """Every answer, in order, awaited concurrently; the first failure cancels the others and is raised."""
    if len(asked) == 1:
        return [await asked[0]]
    running = [asyncio.ensure_future(each) for each in asked]
    try:
        return list(await asyncio.gather(*running))
    except BaseException:
        for each in running:
            each.cancel()
        raise
