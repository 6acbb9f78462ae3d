"""Tool time limits: the tool's own, the endpoint's, the setting's; what the caller and the audit trail get (13.5)."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Iterator

import pytest
from django.test import override_settings

from mcp_django import Context
from mcp_django.declarations import DeclarationError, Tool
from mcp_django.endpoints import Endpoint
from mcp_django.models import ToolCallRecord
from mcp_django.registry import Registry
from mcp_django.runtime.executor import database_threads, dedicated_threads, run_sync, running_jobs
from mcp_django.testing import MCPCallError, MCPTestClient

# Pool threads run close_old_connections() around every job, which touches the database.
pytestmark = pytest.mark.django_db(transaction=True)

AUDIT = "mcp_django.interceptors.audit.AuditSinkInterceptor"
WAIT_S = 30.0

registry = Registry()
release = threading.Event()
"""What the blocked sync tool waits for: set by each test's teardown, so no thread outlives a test."""
entered = threading.Event()
"""Set by the blocked sync tool once it runs."""
cancelled: list[str] = []


@registry.tool
def blocked(seconds: float = WAIT_S) -> str:
    """Wait until released (a stand-in for a runaway query)."""
    entered.set()
    release.wait(seconds)
    return "released"


@registry.tool(timeout=0.2)
def blocked_briefly() -> str:
    """Wait until released, with a time limit of its own."""
    release.wait(WAIT_S)
    return "released"


@registry.tool
async def sleeper(ctx: Context) -> str:
    """Sleep far longer than any limit."""
    try:
        await asyncio.sleep(WAIT_S)
    except asyncio.CancelledError:
        cancelled.append("sleeper")
        raise
    return "woke"


@registry.tool
def quick() -> str:
    """Answer at once."""
    return "done"


registry.freeze()


@pytest.fixture(autouse=True)
def _released() -> Iterator[None]:
    release.clear()
    entered.clear()
    cancelled.clear()
    yield
    release.set()


async def _until(condition: Callable[[], bool]) -> None:
    """Return once `condition()` holds (checked every 10 ms, for at most WAIT_S)."""
    async with asyncio.timeout(WAIT_S):
        while not condition():  # noqa: ASYNC110  # a counter of another thread: nothing to await
            await asyncio.sleep(0.01)


async def _wait_for_no_running_jobs() -> None:
    await _until(lambda: not running_jobs())


def _client(**options: object) -> MCPTestClient:
    endpoint = Endpoint("limited", name="limited", registry=registry, allow_anonymous=True, **options)  # type: ignore[arg-type]
    return MCPTestClient(endpoint, era="stateless")


async def test_a_sync_tool_past_the_endpoints_limit_answers_a_timeout_error_and_its_thread_runs_on() -> None:
    with dedicated_threads(), pytest.raises(MCPCallError) as raised:
        await _client(tool_timeout=0.2).call_tool("blocked")

    assert (raised.value.code, raised.value.message) == (-32603, "Tool blocked did not finish within 0.2 s")
    assert raised.value.data == {"reason": "timeout", "timeoutSeconds": 0.2}
    assert running_jobs() == 1  # the thread cannot be stopped: it is left to finish
    release.set()
    await _wait_for_no_running_jobs()


async def test_the_abandoned_code_is_logged_when_abandoned_and_when_it_returns(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="mcp_django.runtime.executor"):
        with dedicated_threads(), pytest.raises(MCPCallError):
            await _client(tool_timeout=0.2).call_tool("blocked")
        release.set()
        await _wait_for_no_running_jobs()

    abandoned, returned = [record.getMessage() for record in caplog.records]
    assert abandoned.startswith("tests.faults.test_time_limits.blocked abandoned after ")
    assert abandoned.endswith(" s: its caller stopped waiting, and its thread runs on until it returns")
    assert returned.startswith("tests.faults.test_time_limits.blocked returned ")
    assert " s after its caller stopped waiting (" in returned


async def test_an_async_tool_past_the_limit_is_cancelled_where_it_awaits() -> None:
    with pytest.raises(MCPCallError) as raised:
        await _client(tool_timeout=0.2).call_tool("sleeper")

    assert raised.value.data == {"reason": "timeout", "timeoutSeconds": 0.2}
    assert cancelled == ["sleeper"]


@override_settings(MCP_DJANGO={"TOOL_TIMEOUT": 0.2})
async def test_the_setting_limits_every_endpoint_without_a_limit_of_its_own() -> None:
    with dedicated_threads(), pytest.raises(MCPCallError) as raised:
        await _client().call_tool("blocked")

    assert raised.value.data == {"reason": "timeout", "timeoutSeconds": 0.2}


@override_settings(MCP_DJANGO={"TOOL_TIMEOUT": 0.1})
async def test_the_endpoints_limit_wins_over_the_setting_and_a_tools_own_over_both() -> None:
    client = _client(tool_timeout=60)
    release.set()
    with dedicated_threads():
        assert (await client.call_tool("blocked", {"seconds": 0.3}))["structuredContent"] == {"result": "released"}
        release.clear()
        with pytest.raises(MCPCallError) as raised:
            await client.call_tool("blocked_briefly")

    assert raised.value.data == {"reason": "timeout", "timeoutSeconds": 0.2}


async def test_calls_within_the_limit_answer_as_usual() -> None:
    result = await _client(tool_timeout=5).call_tool("quick")

    assert result["structuredContent"] == {"result": "done"}


async def test_the_audit_row_of_a_call_past_its_limit_says_timeout() -> None:
    endpoint = Endpoint(
        "audited", name="audited", registry=registry, allow_anonymous=True, interceptors=[AUDIT], tool_timeout=0.2
    )
    with dedicated_threads(), pytest.raises(MCPCallError):
        await MCPTestClient(endpoint, era="stateless").call_tool("blocked")

    rows = [(row.tool, row.outcome) async for row in ToolCallRecord.objects.all()]
    assert rows == [("blocked", "timeout")]
    release.set()
    await _wait_for_no_running_jobs()


async def test_a_call_whose_caller_goes_away_is_in_the_audit_trail_as_cancelled() -> None:
    endpoint = Endpoint("audited", name="audited", registry=registry, allow_anonymous=True, interceptors=[AUDIT])
    entered.clear()
    with dedicated_threads():
        call = asyncio.ensure_future(MCPTestClient(endpoint, era="stateless").call_tool("blocked", {"seconds": 5}))
        assert await asyncio.to_thread(entered.wait, WAIT_S)
        call.cancel()  # what a disconnect does to the request's task
        with pytest.raises(asyncio.CancelledError):
            await call

        async def rows() -> list[tuple[str, str]]:
            return [(row.tool, row.outcome) async for row in ToolCallRecord.objects.all()]

        for _ in range(int(WAIT_S / 0.02)):  # the row is written by a task of its own
            if await rows():
                break
            await asyncio.sleep(0.02)
        assert await rows() == [("blocked", "cancelled")]
        release.set()
        await _wait_for_no_running_jobs()


@override_settings(MCP_DJANGO={"DATABASE_THREADS": 1})
async def test_a_cancelled_call_still_queued_for_a_thread_never_runs() -> None:
    ran: list[str] = []

    def queued() -> None:
        ran.append("queued")

    with dedicated_threads():
        assert database_threads() == 1
        holding = asyncio.ensure_future(run_sync(blocked))
        await _until(entered.is_set)
        waiting = asyncio.ensure_future(run_sync(queued))
        await asyncio.sleep(0)  # submitted to the pool, behind the held thread
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting  # once it is, the pool's job is cancelled too
        release.set()
        assert await holding == "released"

    assert waiting.cancelled()
    assert ran == []
    await run_sync(ran.append, "after")  # the pool's one thread is free again
    assert ran == ["after"]


def test_a_timeout_that_is_not_a_positive_number_cannot_be_declared() -> None:
    with pytest.raises(DeclarationError) as raised:
        Tool(quick, timeout=0)

    assert str(raised.value) == "tool 'quick': timeout must be a positive number of seconds"
