"""Tool calls as units of work: atomic on every `ATOMIC_REQUESTS` database, rolled back by the call's own failure.

In memory, with real rows; tests/live/test_transactions_live.py does the same through the fast path, the
Django view and WebSocket of a real server.
"""

from __future__ import annotations

import asyncio
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.core.signals import setting_changed
from django.db import connections, transaction

import mcp_django
from example_project.demo.models import Book
from mcp_django import DeclarationError, Registry
from mcp_django.declarations import Tool
from mcp_django.endpoints import Endpoint
from mcp_django.providers import ToolProvider
from mcp_django.runtime.executor import dedicated_threads, running_jobs
from mcp_django.runtime.transactions import atomic_databases
from mcp_django.testing import MCPTestClient, assert_mcp_error, assert_tool_error, assert_tool_result
from mcp_django.toolsets import Toolset

pytestmark = pytest.mark.django_db(transaction=True)

WAIT_S = 10.0
registry = Registry("transactions")
released = threading.Event()


@registry.tool
def add_then_raise(title: str) -> str:
    """Add a book, then fail."""
    Book.objects.create(title=title, author="A", year=2000)
    raise RuntimeError("the second step failed")


@registry.tool
def add_then_refuse(title: str) -> str:
    """Add a book, then refuse with a message for the model."""
    Book.objects.create(title=title, author="A", year=2000)
    raise mcp_django.ToolError("refused after writing")


@registry.tool
def add_then_answer_an_error(title: str):  # no annotation: a result dict as is
    """Add a book, then return a result marked isError."""
    Book.objects.create(title=title, author="A", year=2000)
    return {"content": [{"type": "text", "text": "it did not work"}], "isError": True}


@registry.tool
def add(title: str) -> str:
    """Add a book."""
    Book.objects.create(title=title, author="A", year=2000)
    return "added"


@registry.tool(atomic=False)
def add_outside_a_transaction(title: str) -> str:
    """Add a book, then fail: not atomic, the book stays."""
    Book.objects.create(title=title, author="A", year=2000)
    raise RuntimeError("failed after writing")


@registry.tool
@transaction.non_atomic_requests
def add_under_non_atomic_requests(title: str) -> str:
    """Add a book, then fail: Django's own opt-out, on the default database."""
    Book.objects.create(title=title, author="A", year=2000)
    raise RuntimeError("failed after writing")


@registry.tool(atomic=True)
def add_two_then_fail(title: str) -> str:
    """Add two books, then fail half-way: atomic on its own, whatever ATOMIC_REQUESTS says."""
    Book.objects.create(title=title, author="A", year=2000)
    Book.objects.create(title=f"{title} II", author="A", year=2001)
    raise RuntimeError("the third step failed")


@registry.tool(atomic=True, using="default")
def add_on_default_then_refuse(title: str) -> str:
    """Add a book on the database `using=` names, then refuse."""
    Book.objects.create(title=title, author="A", year=2000)
    raise mcp_django.ToolError("refused after writing")


@registry.tool(timeout=0.2)
def add_then_wait(title: str) -> str:
    """Add a book, then wait past the time limit until the test releases it."""
    Book.objects.create(title=title, author="A", year=2000)
    released.wait(WAIT_S)
    return "too late"


@registry.tool
async def add_async_then_raise(title: str) -> str:
    """An async tool: Django's transactions are per thread, so it is not wrapped."""
    await Book.objects.acreate(title=title, author="A", year=2000)
    raise RuntimeError("failed after writing")


registry.freeze()


@pytest.fixture
def atomic_requests(transactional_db: None) -> Iterator[None]:
    """ATOMIC_REQUESTS on the default database, as a project sets it in DATABASES."""
    settings = connections.settings["default"]
    before = settings.get("ATOMIC_REQUESTS", False)
    settings["ATOMIC_REQUESTS"] = True
    databases_changed(enter=True)
    try:
        yield
    finally:
        settings["ATOMIC_REQUESTS"] = before
        databases_changed(enter=False)


def databases_changed(*, enter: bool) -> None:
    """Tell whoever decided from `DATABASES` once that it changed, as `override_settings` would on entering or leaving.

    Django warns on entering that overriding `DATABASES` "can lead to unexpected behavior": `override_settings`
    would install a new dict that the open connections never read. These tests edit, in place, the very dict
    the default connection reads (`connections.settings` is `settings.DATABASES`), so that concern does not
    apply: it is asserted here, and only that warning is silenced, only around this signal.
    """
    assert connections["default"].settings_dict is connections.settings["default"]
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Overriding setting DATABASES", category=UserWarning)
        setting_changed.send(sender=type(connections), setting="DATABASES", value=connections.settings, enter=enter)


def test_the_atomic_databases_are_decided_once_and_again_when_databases_change() -> None:
    settings = connections.settings["default"]
    before = settings.get("ATOMIC_REQUESTS", False)
    settings["ATOMIC_REQUESTS"] = False
    databases_changed(enter=True)
    try:
        assert atomic_databases() == ()
        settings["ATOMIC_REQUESTS"] = True
        assert atomic_databases() == ()  # decided once: an edit nobody announces is not seen
        databases_changed(enter=True)
        assert atomic_databases() == ("default",)
        assert atomic_databases({"default"}) == ()
    finally:
        settings["ATOMIC_REQUESTS"] = before
        databases_changed(enter=False)


def idle_within(seconds: float) -> bool:
    """True once no sync job runs (the abandoned tool returned and its transaction ended), within `seconds`."""
    deadline = time.monotonic() + seconds
    while running_jobs() and time.monotonic() < deadline:
        time.sleep(0.01)
    return running_jobs() == 0


async def atitles() -> list[str]:
    return [title async for title in Book.objects.order_by("title").values_list("title", flat=True)]


@pytest.mark.parametrize("tool", ["add_then_raise", "add_then_refuse", "add_then_answer_an_error"])
async def test_a_tool_that_writes_and_fails_leaves_nothing(
    mcp_client: Callable[..., MCPTestClient], atomic_requests: None, tool: str, mcp_era: str
) -> None:
    client = mcp_client(registry, era=mcp_era)

    assert_tool_error(await client.call_tool(tool, {"title": "Lost"}))
    assert await atitles() == []


async def test_a_tool_that_succeeds_commits_its_rows(
    mcp_client: Callable[..., MCPTestClient], atomic_requests: None
) -> None:
    assert_tool_result(await mcp_client(registry).call_tool("add", {"title": "Kept"}), text="^added$")
    assert await atitles() == ["Kept"]


async def test_on_the_database_threads_of_the_fast_path_a_failure_rolls_back_too(
    mcp_client: Callable[..., MCPTestClient], atomic_requests: None
) -> None:
    client = mcp_client(registry)
    with dedicated_threads():
        assert_tool_error(await client.call_tool("add_then_raise", {"title": "Lost"}))
        assert_tool_result(await client.call_tool("add", {"title": "Kept"}))
    assert await atitles() == ["Kept"]


@pytest.mark.parametrize("tool", ["add_outside_a_transaction", "add_under_non_atomic_requests"])
async def test_atomic_false_and_non_atomic_requests_leave_the_row_of_a_failed_call(
    mcp_client: Callable[..., MCPTestClient], atomic_requests: None, tool: str
) -> None:
    assert_tool_error(await mcp_client(registry).call_tool(tool, {"title": "Stays"}))
    assert await atitles() == ["Stays"]


async def test_without_atomic_requests_a_failed_call_leaves_its_row_as_a_view_would(
    mcp_client: Callable[..., MCPTestClient], transactional_db: None
) -> None:
    assert_tool_error(await mcp_client(registry).call_tool("add_then_raise", {"title": "Stays"}))
    assert await atitles() == ["Stays"]


async def test_an_async_tool_is_not_wrapped(mcp_client: Callable[..., MCPTestClient], atomic_requests: None) -> None:
    assert_tool_error(await mcp_client(registry).call_tool("add_async_then_raise", {"title": "Stays"}))
    assert await atitles() == ["Stays"]


async def test_a_call_past_its_time_limit_is_rolled_back_when_its_thread_ends(
    mcp_client: Callable[..., MCPTestClient], atomic_requests: None
) -> None:
    released.clear()
    with dedicated_threads(), assert_mcp_error(match="did not finish within 0.2 s"):
        await mcp_client(registry).call_tool("add_then_wait", {"title": "Late"})
    released.set()
    assert await asyncio.to_thread(idle_within, WAIT_S), "the abandoned tool's thread did not end"
    assert await atitles() == []


class Writer(ToolProvider):
    """A provider whose tool writes, then fails."""

    id = "tests.transactions.writer"

    def list_tools(self, ctx: Any) -> list[dict[str, Any]]:
        return [{"name": "write", "inputSchema": {"type": "object"}}]

    def call_tool(self, name: str, arguments: dict[str, Any], ctx: Any) -> str:
        Book.objects.create(title="From a provider", author="A", year=2000)
        raise mcp_django.ToolError("failed after writing")


class WritingTools(Toolset):
    """A toolset whose one tool writes, then fails; `atomic = True` makes its tools atomic on their own."""

    atomic = True

    def build_tools(self) -> list[Tool]:
        def write_and_fail(title: str) -> str:
            """Write, then fail."""
            Book.objects.create(title=title, author="A", year=2000)
            raise RuntimeError("failed after writing")

        return [Tool(write_and_fail)]


class NonAtomicWriter(Writer):
    id = "tests.transactions.non_atomic_writer"
    atomic = False


async def test_a_providers_tool_call_is_atomic_unless_the_provider_opts_out(
    mcp_client: Callable[..., MCPTestClient], atomic_requests: None
) -> None:
    atomic = Endpoint("tx/adapter", name="tx", mode="adapter", providers=[Writer], allow_anonymous=True)
    non_atomic = Endpoint("tx/other", name="tx2", mode="adapter", providers=[NonAtomicWriter], allow_anonymous=True)

    assert_tool_error(await mcp_client(atomic).call_tool("write"))
    assert await atitles() == []
    assert_tool_error(await mcp_client(non_atomic).call_tool("write"))
    assert await atitles() == ["From a provider"]


@pytest.mark.parametrize("tool", ["add_two_then_fail", "add_on_default_then_refuse"])
async def test_an_atomic_tool_failing_half_way_leaves_no_row_without_atomic_requests(
    mcp_client: Callable[..., MCPTestClient], transactional_db: None, tool: str, mcp_era: str
) -> None:
    assert atomic_databases() == ()  # no ATOMIC_REQUESTS anywhere
    client = mcp_client(registry, era=mcp_era)

    assert_tool_error(await client.call_tool(tool, {"title": "Lost"}))
    assert await atitles() == []


async def test_a_toolset_s_atomic_applies_to_its_tools_on_the_server_endpoint_and_as_a_provider(
    mcp_client: Callable[..., MCPTestClient], transactional_db: None
) -> None:
    served = Registry("transactions-toolset")
    WritingTools.register(served)
    served.freeze()
    adapter = Endpoint("tx/tools", name="tx3", mode="adapter", providers=[WritingTools], allow_anonymous=True)

    assert_tool_error(await mcp_client(served).call_tool("write_and_fail", {"title": "Lost"}))
    assert_tool_error(await mcp_client(adapter).call_tool("write_and_fail", {"title": "Lost too"}))
    assert await atitles() == []


def test_using_without_atomic_true_is_a_declaration_error() -> None:
    def write() -> str:
        """Write."""
        return "written"

    with pytest.raises(DeclarationError, match=r"^tool 'write': using= names the databases of atomic=True"):
        Tool(write, using="default")
