"""The executor: sync code on long-lived database threads under `dedicated_threads()`, Django's way otherwise."""

from __future__ import annotations

import asyncio
import threading

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import override_settings

from mcp_django.runtime.executor import THREAD_NAME_PREFIX, dedicated_threads, run_sync, uses_dedicated_threads


def _where() -> tuple[str, int, object]:
    """The thread this runs on, and its database connection after a query."""
    get_user_model().objects.exists()
    return threading.current_thread().name, threading.get_ident(), connection.connection


@pytest.mark.django_db(transaction=True)
@override_settings(MCP_DJANGO={"DATABASE_THREADS": 2})
async def test_database_work_under_the_marker_runs_on_pool_threads_that_keep_their_connections() -> None:
    async def request() -> tuple[str, int, object]:
        with dedicated_threads():  # as the fast path marks each request it serves
            return await run_sync(_where)

    seen = [await request() for _ in range(20)]

    assert all(name.startswith(THREAD_NAME_PREFIX) for name, _, _ in seen)
    assert threading.get_ident() not in {ident for _, ident, _ in seen}
    connections_by_thread: dict[int, set[int]] = {}
    for _, ident, conn in seen:
        connections_by_thread.setdefault(ident, set()).add(id(conn))
    assert len(connections_by_thread) <= 2  # bounded by DATABASE_THREADS
    assert all(len(ids) == 1 for ids in connections_by_thread.values())  # a thread reuses its connection


@pytest.mark.django_db(transaction=True)  # the thread writes: an IMMEDIATE test transaction would lock it out
async def test_without_the_marker_it_runs_like_sync_to_async_on_its_thread_and_connection() -> None:
    await sync_to_async(get_user_model().objects.create_user)("only-in-this-transaction")

    def names() -> list[str]:
        return list(get_user_model().objects.values_list("username", flat=True))

    assert await run_sync(names) == ["only-in-this-transaction"]
    assert (await run_sync(_where))[2] == (await sync_to_async(_where)())[2]


@pytest.mark.django_db  # pool threads check their connections around every job
async def test_arguments_and_exceptions_pass_through() -> None:
    def divide(a: int, /, *, by: int) -> float:
        return a / by

    with dedicated_threads():
        assert await run_sync(divide, 6, by=3) == 2
        with pytest.raises(ZeroDivisionError):
            await run_sync(divide, 1, by=0)


async def test_the_marker_applies_inside_its_block_only() -> None:
    assert not uses_dedicated_threads()
    with dedicated_threads():
        assert uses_dedicated_threads()
    assert not uses_dedicated_threads()


@pytest.mark.django_db
async def test_a_job_that_calls_run_sync_again_runs_it_in_place_instead_of_waiting_for_a_slot() -> None:
    async def inner() -> str:
        return await run_sync(lambda: threading.current_thread().name)

    def outer() -> tuple[str, str]:
        return threading.current_thread().name, async_to_sync(inner)()

    with override_settings(MCP_DJANGO={"DATABASE_THREADS": 1}), dedicated_threads():
        mine, nested = await run_sync(outer)  # with one thread, waiting for a slot would never end

    assert mine == nested


@pytest.mark.django_db  # pool threads check their connections around every job (one may hold an earlier test's)
async def test_sync_code_on_the_database_threads_calls_async_code_on_the_callers_own_loop() -> None:
    # what `ctx.elicit_sync` does on the fast path: the coroutine must reach the request's streams and futures
    caller = asyncio.get_running_loop()

    async def loop_of_the_coroutine() -> asyncio.AbstractEventLoop:
        return asyncio.get_running_loop()

    def sync_code() -> asyncio.AbstractEventLoop:
        return async_to_sync(loop_of_the_coroutine)()

    with dedicated_threads():
        assert await run_sync(sync_code) is caller
