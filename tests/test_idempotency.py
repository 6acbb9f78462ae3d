"""Idempotency keys on `tools/call` (`mcp_django.safety.idempotency`), in memory with real rows.

tests/live/test_idempotency_live.py sends the keys over real sockets with the official client, and races
two requests with one key at a live server.
"""

from __future__ import annotations

import asyncio
import datetime
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.test import override_settings
from django.utils import timezone

import mcp_django
from example_project.demo.models import Book
from mcp_django import Registry
from mcp_django.endpoints import Endpoint
from mcp_django.models import IdempotentCall
from mcp_django.protocol.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS
from mcp_django.runtime.executor import dedicated_threads
from mcp_django.runtime.transactions import Settlement, settlement
from mcp_django.safety.idempotency import HEADER_KEY, META_KEY, REPLAYED, digest_of
from mcp_django.testing import MCPTestClient, assert_mcp_error, assert_tool_error, assert_tool_result

pytestmark = pytest.mark.django_db(transaction=True)

WAIT_S = 10.0
registry = Registry("idempotency")
gate = threading.Event()
entered = threading.Event()


@registry.tool(atomic=True)
def refund(order: str, cents: int) -> str:
    """Refund an order: one book row per refund, so the rows count the runs."""
    Book.objects.create(title=f"refund {order}", author="shop", year=cents)
    return f"refunded {cents} on {order}"


@registry.tool(atomic=True)
def refund_slowly(order: str) -> str:
    """Refund, waiting for the test's gate after writing (a call still running when its retry comes)."""
    Book.objects.create(title=f"slow {order}", author="shop", year=1)
    entered.set()
    gate.wait(WAIT_S)
    return f"refunded {order}"


@registry.tool(atomic=True)
def refund_then_fail(order: str) -> str:
    """Write, then fail: the transaction rolls the row back and the key is given up."""
    Book.objects.create(title=f"failed {order}", author="shop", year=1)
    raise mcp_django.ToolError("the payment provider said no")


@registry.tool
async def refund_async(order: str) -> str:
    """An async tool: not in a transaction, its result is stored after it returns."""
    await Book.objects.acreate(title=f"async {order}", author="shop", year=1)
    return f"refunded {order}"


@registry.tool(atomic=True, annotations={"idempotentHint": True})
def set_price(order: str) -> str:
    """Idempotent by nature: its calls keep nothing under a key."""
    Book.objects.create(title=f"price {order}", author="shop", year=1)
    return "set"


@registry.tool
async def refund_through_another(order: str, ctx: mcp_django.Context) -> str:
    """An async tool that calls the atomic refund: only its own result is kept under the key."""
    await registry.tools["refund"].call({"order": order, "cents": 7}, ctx.request)
    return f"outer refunded {order}"


registry.freeze()
ENDPOINT = Endpoint("idem/mcp", name="idem", registry=registry, allow_anonymous=True)


@pytest.fixture
def database_threads() -> Iterator[None]:
    """Sync code on the fast path's database threads, each with its own connection, as a live server runs it
    (outside them every sync call of an async test shares one thread: a running tool would hold up its retry)."""
    with dedicated_threads():
        yield


async def call(client: MCPTestClient, tool: str, arguments: dict[str, Any], key: str | None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": tool, "arguments": arguments}
    if key is not None:
        params["_meta"] = {META_KEY: key}
    return await client.request("tools/call", params)


async def rows(prefix: str) -> int:
    return await Book.objects.filter(title__startswith=prefix).acount()


async def test_a_retry_with_the_key_gets_the_first_result_back_and_the_tool_runs_once(
    mcp_client: Callable[..., MCPTestClient], mcp_era: str
) -> None:
    client = mcp_client(ENDPOINT, era=mcp_era)

    first = await call(client, "refund", {"order": "A1", "cents": 500}, "key-1")
    again = await call(client, "refund", {"order": "A1", "cents": 500}, "key-1")

    assert_tool_result(first, text="^refunded 500 on A1$")
    assert again["content"] == first["content"]
    assert again["_meta"][REPLAYED] is True
    assert REPLAYED not in first.get("_meta", {})
    assert await rows("refund A1") == 1
    stored = await IdempotentCall.objects.aget(key="key-1")
    assert (stored.state, stored.tool, stored.endpoint) == ("done", "refund", "idem")


async def test_without_a_key_every_call_runs(mcp_client: Callable[..., MCPTestClient]) -> None:
    client = mcp_client(ENDPOINT)
    await call(client, "refund", {"order": "A2", "cents": 1}, None)
    await call(client, "refund", {"order": "A2", "cents": 1}, None)
    assert await rows("refund A2") == 2
    assert await IdempotentCall.objects.acount() == 0


async def test_the_same_key_with_other_arguments_is_refused_and_runs_nothing(
    mcp_client: Callable[..., MCPTestClient],
) -> None:
    client = mcp_client(ENDPOINT)
    await call(client, "refund", {"order": "A3", "cents": 500}, "key-3")

    with assert_mcp_error(INVALID_PARAMS, match="Idempotency key reused") as raised:
        await call(client, "refund", {"order": "A3", "cents": 5000}, "key-3")
    assert raised.value.data == {"reason": "idempotency_key_reused"}
    with assert_mcp_error(INVALID_PARAMS, match="Idempotency key reused"):
        await call(client, "refund_async", {"order": "A3"}, "key-3")
    assert await rows("refund A3") == 1


async def test_keys_are_scoped_to_the_caller_and_the_endpoint(
    mcp_client: Callable[..., MCPTestClient], django_user_model: Any
) -> None:
    alice = await django_user_model.objects.acreate(username="alice")
    bob = await django_user_model.objects.acreate(username="bob")
    other = Endpoint("idem2/mcp", name="idem2", registry=registry, allow_anonymous=True)

    for client in (mcp_client(ENDPOINT, user=alice), mcp_client(ENDPOINT, user=bob), mcp_client(other, user=bob)):
        result = await call(client, "refund", {"order": "A4", "cents": 1}, "shared-key")
        assert REPLAYED not in result.get("_meta", {})
    assert await rows("refund A4") == 3


async def test_a_failed_call_gives_its_key_up_and_the_retry_runs_again(
    mcp_client: Callable[..., MCPTestClient],
) -> None:
    client = mcp_client(ENDPOINT)

    assert_tool_error(await call(client, "refund_then_fail", {"order": "A5"}, "key-5"))
    assert_tool_error(await call(client, "refund_then_fail", {"order": "A5"}, "key-5"))

    assert await rows("failed A5") == 0  # each run rolled back
    assert await IdempotentCall.objects.acount() == 0


async def test_the_result_is_stored_in_the_call_s_transaction_so_a_failure_to_store_it_rolls_the_call_back(
    mcp_client: Callable[..., MCPTestClient],
) -> None:
    def cannot_keep(result: dict[str, Any]) -> None:
        raise RuntimeError("the key's row cannot be written")

    token = settlement.set(Settlement("default", cannot_keep))
    try:  # the tool runs inside this settlement, as IdempotencyHook runs it
        result = await mcp_client(registry).call_tool("refund", {"order": "A6", "cents": 1})
    finally:
        settlement.reset(token)

    assert_tool_error(result)
    assert await rows("refund A6") == 0


async def test_an_async_tool_s_result_is_stored_after_it_returns(mcp_client: Callable[..., MCPTestClient]) -> None:
    client = mcp_client(ENDPOINT)
    await call(client, "refund_async", {"order": "A7"}, "key-7")
    replay = await call(client, "refund_async", {"order": "A7"}, "key-7")
    assert replay["_meta"][REPLAYED] is True
    assert await rows("async A7") == 1


async def test_a_call_the_keyed_call_makes_keeps_nothing_of_its_own(mcp_client: Callable[..., MCPTestClient]) -> None:
    client = mcp_client(ENDPOINT)
    first = await call(client, "refund_through_another", {"order": "A17"}, "key-17")
    replay = await call(client, "refund_through_another", {"order": "A17"}, "key-17")

    assert first["content"][0]["text"] == "outer refunded A17"
    assert replay["content"] == first["content"]
    assert await rows("refund A17") == 1


async def test_a_tool_annotated_idempotent_keeps_nothing(mcp_client: Callable[..., MCPTestClient]) -> None:
    client = mcp_client(ENDPOINT)
    await call(client, "set_price", {"order": "A8"}, "key-8")
    await call(client, "set_price", {"order": "A8"}, "key-8")
    assert await rows("price A8") == 2
    assert await IdempotentCall.objects.acount() == 0


@pytest.mark.usefixtures("database_threads")
async def test_a_retry_while_the_first_call_runs_waits_for_it_and_gets_its_result(
    mcp_client: Callable[..., MCPTestClient],
) -> None:
    gate.clear()
    entered.clear()
    client = mcp_client(ENDPOINT)
    first = asyncio.create_task(call(client, "refund_slowly", {"order": "A9"}, "key-9"))
    assert await asyncio.to_thread(entered.wait, WAIT_S)
    retry = asyncio.create_task(call(client, "refund_slowly", {"order": "A9"}, "key-9"))
    await asyncio.sleep(0)  # the retry starts polling the running row
    assert not retry.done()
    gate.set()

    answers = await asyncio.wait_for(asyncio.gather(first, retry), WAIT_S)

    assert answers[0]["content"] == answers[1]["content"]
    assert answers[1]["_meta"][REPLAYED] is True
    assert await rows("slow A9") == 1


@pytest.mark.usefixtures("database_threads")
async def test_a_retry_waits_at_most_idempotency_wait_then_answers_key_in_use(
    mcp_client: Callable[..., MCPTestClient],
) -> None:
    gate.clear()
    entered.clear()
    client = mcp_client(ENDPOINT)
    first = asyncio.create_task(call(client, "refund_slowly", {"order": "A10"}, "key-10"))
    assert await asyncio.to_thread(entered.wait, WAIT_S)
    try:
        with (
            override_settings(MCP_DJANGO={"IDEMPOTENCY_WAIT": 0.05}),
            assert_mcp_error(INTERNAL_ERROR, match="still running") as raised,
        ):
            await call(client, "refund_slowly", {"order": "A10"}, "key-10")
    finally:
        gate.set()
    assert raised.value.data == {"reason": "idempotency_key_in_use"}
    assert_tool_result(await asyncio.wait_for(first, WAIT_S))
    assert await rows("slow A10") == 1


async def test_an_expired_key_is_forgotten_and_the_call_runs_again(mcp_client: Callable[..., MCPTestClient]) -> None:
    client = mcp_client(ENDPOINT)
    await call(client, "refund", {"order": "A11", "cents": 1}, "key-11")
    await IdempotentCall.objects.aupdate(expires=timezone.now() - datetime.timedelta(seconds=1))

    again = await call(client, "refund", {"order": "A11", "cents": 1}, "key-11")

    assert REPLAYED not in again.get("_meta", {})
    assert await rows("refund A11") == 2
    assert await IdempotentCall.objects.acount() == 1


async def test_a_key_held_by_a_call_that_never_finished_is_taken_over_after_the_lease(
    mcp_client: Callable[..., MCPTestClient],
) -> None:
    old = timezone.now() - datetime.timedelta(seconds=601)
    digest = digest_of("refund", {"order": "A12", "cents": 1})
    expires = timezone.now() + datetime.timedelta(days=1)
    await IdempotentCall.objects.acreate(
        principal="", endpoint="idem", key="key-12", tool="refund", digest=digest, started=old, expires=expires
    )

    result = await call(mcp_client(ENDPOINT), "refund", {"order": "A12", "cents": 1}, "key-12")

    assert_tool_result(result)
    assert await rows("refund A12") == 1
    assert (await IdempotentCall.objects.aget(key="key-12")).state == "done"


async def test_a_caller_keeps_at_most_idempotency_max_keys(mcp_client: Callable[..., MCPTestClient]) -> None:
    client = mcp_client(ENDPOINT)
    with override_settings(MCP_DJANGO={"IDEMPOTENCY_MAX_KEYS": 2}):
        for number in range(4):
            await call(client, "refund", {"order": f"A13-{number}", "cents": 1}, f"key-13-{number}")
    keys = [key async for key in IdempotentCall.objects.order_by("key").values_list("key", flat=True)]
    assert keys == ["key-13-2", "key-13-3"]


@pytest.mark.parametrize("key", ["", "x" * 256, "caf\u00e9", "tab\there"])
async def test_a_key_that_is_not_1_to_255_printable_ascii_characters_is_refused(
    mcp_client: Callable[..., MCPTestClient], key: str
) -> None:
    with assert_mcp_error(INVALID_PARAMS, match="printable ASCII"):
        await call(mcp_client(ENDPOINT), "refund", {"order": "A14", "cents": 1}, key)
    assert await rows("refund A14") == 0


async def test_the_header_s_key_counts_like_meta_s_and_the_two_must_agree(
    mcp_client: Callable[..., MCPTestClient],
) -> None:
    client = mcp_client(ENDPOINT)
    client.connection.extra[HEADER_KEY] = '"key-15"'  # as the HTTP transport hands it over: an sf-string
    await call(client, "refund", {"order": "A15", "cents": 1}, None)
    replay = await call(client, "refund", {"order": "A15", "cents": 1}, "key-15")
    assert replay["_meta"][REPLAYED] is True

    with assert_mcp_error(INVALID_PARAMS, match="differ"):
        await call(client, "refund", {"order": "A15", "cents": 1}, "another")
    assert await rows("refund A15") == 1


async def test_the_admin_lists_the_keys_read_only(mcp_client: Callable[..., MCPTestClient], admin_client: Any) -> None:
    await call(mcp_client(ENDPOINT), "refund", {"order": "A16", "cents": 1}, "key-16")
    row = await IdempotentCall.objects.aget(key="key-16")

    listed = await asyncio.to_thread(admin_client.get, "/admin/mcp_django/idempotentcall/")
    shown = await asyncio.to_thread(admin_client.get, f"/admin/mcp_django/idempotentcall/{row.pk}/change/")

    assert listed.status_code == 200
    assert b"key-16" in listed.content
    assert b"refunded 1 on A16" in shown.content
    assert b'name="_save"' not in shown.content
