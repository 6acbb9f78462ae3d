"""`gather_eagerly`: concurrent like `asyncio.gather`, without tasks for coroutines that never wait."""

from __future__ import annotations

import asyncio

import pytest

from mcp_django.interceptors.invoke import gather_eagerly


async def test_coroutines_that_never_wait_finish_in_order_without_a_task() -> None:
    current = asyncio.current_task()
    seen: list[asyncio.Task[object] | None] = []

    async def quick(value: int) -> int:
        seen.append(asyncio.current_task())
        return value * 2

    assert await gather_eagerly([quick(1), quick(2), quick(3)]) == [2, 4, 6]
    assert seen == [current, current, current]


async def test_coroutines_that_wait_run_concurrently_and_keep_their_places() -> None:
    gate = asyncio.Event()
    order: list[str] = []

    async def waits() -> str:
        order.append("waits started")
        await gate.wait()
        order.append("waits finished")
        return "slow"

    async def opens() -> str:
        order.append("opens")
        gate.set()
        await asyncio.sleep(0)
        return "fast"

    result = await asyncio.wait_for(gather_eagerly([waits(), opens()]), 5)
    assert result == ["slow", "fast"]
    assert order == ["waits started", "opens", "waits finished"]


async def test_an_exception_after_a_suspension_reaches_the_caller() -> None:
    async def fails_later() -> None:
        await asyncio.sleep(0)
        raise ValueError("late")

    with pytest.raises(ValueError, match="late"):
        await gather_eagerly([fails_later()])


async def test_cancelling_the_caller_cancels_a_suspended_coroutine() -> None:
    cancelled = asyncio.Event()

    async def forever() -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    outer = asyncio.ensure_future(gather_eagerly([forever()]))
    await asyncio.sleep(0)
    outer.cancel()
    with pytest.raises(asyncio.CancelledError):
        await outer
    await asyncio.wait_for(cancelled.wait(), 5)
