"""Two worker processes behind one endpoint: a client's answer may reach either of them, and an event emitted on
one reaches a push stream held on the other.

The example project runs twice under daphne on one database and one Redis channel layer. A tool on
worker A asks the client a question (handshake-era elicitation on A's SSE stream); the client posts
its answer to worker B; the Channels layer carries it to A, where the tool finishes.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from mcp_django.client import MCPClient
from mcp_django.client.connection import pool
from tests.conftest import LiveServer, serve_example
from tests.live.words import unique_word
from tests.services_support import ServiceUnavailable, redis_server

pytestmark = pytest.mark.live

ACCEPT = "application/json, text/event-stream"
ENDPOINT = "/conformance/mcp"


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    """A throwaway Redis server on a free loopback port (the Makefile installs redis-server)."""
    try:
        with redis_server() as url:
            yield url
    except ServiceUnavailable as unavailable:
        pytest.fail(str(unavailable))


@pytest.fixture(scope="module")
def two_workers(
    live_server_env: dict[str, str], redis_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[LiveServer, LiveServer]]:
    env = {**live_server_env, "MCP_EXAMPLE_REDIS_URL": redis_url}
    logs: Path = tmp_path_factory.mktemp("two-workers")
    with serve_example(env, logs) as first, serve_example(env, logs) as second:
        yield first, second


async def _events(response: httpx2.Response) -> AsyncIterator[dict[str, Any]]:
    async for line in response.aiter_lines():
        if line.startswith("data:") and line[len("data:") :].strip():  # the priming event's data is empty
            yield json.loads(line[len("data:") :])


async def test_an_answer_posted_to_the_other_worker_reaches_the_waiting_tool(
    two_workers: tuple[LiveServer, LiveServer],
) -> None:
    worker_a, worker_b = two_workers
    headers = {"Accept": ACCEPT, "Content-Type": "application/json"}
    init = {
        "protocolVersion": "2025-11-25",
        "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "two-workers", "version": "1"},
    }
    async with httpx2.AsyncClient(timeout=30) as client:
        opened = await client.post(
            worker_a.url(ENDPOINT),
            headers=headers,
            json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init},
        )
        assert opened.status_code == 200, worker_a.log_tail()
        session = {**headers, "Mcp-Session-Id": opened.headers["mcp-session-id"], "MCP-Protocol-Version": "2025-11-25"}
        await client.post(
            worker_a.url(ENDPOINT), headers=session, json={"jsonrpc": "2.0", "method": "notifications/initialized"}
        )

        call = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "test_elicitation", "arguments": {"message": "Who?"}},
        }
        async with client.stream("POST", worker_a.url(ENDPOINT), headers=session, json=call) as streamed:
            events = _events(streamed)
            question = await anext(events)
            assert question["method"] == "elicitation/create", question

            answer = {"action": "accept", "content": {"username": "ada", "email": "ada@example.com"}}
            posted = await client.post(
                worker_b.url(ENDPOINT), headers=session, json={"jsonrpc": "2.0", "id": question["id"], "result": answer}
            )
            assert posted.status_code == 202, worker_b.log_tail()

            final = await anext(events)
    assert final["id"] == 2, worker_a.log_tail()
    assert "ada@example.com" in final["result"]["content"][0]["text"]


async def test_a_book_added_on_one_worker_is_pushed_to_a_stream_held_on_the_other_before_any_heartbeat(
    two_workers: tuple[LiveServer, LiveServer],
) -> None:
    """Events (docs/events.md, "Push"): the emit's announcement crosses the Redis layer; without it the stream
    would read the occurrence only at its next heartbeat, 15 s later, past the bound waited here."""
    worker_a, worker_b = two_workers
    author = f"Two Workers {unique_word(8)}"
    reader = MCPClient({"URL": worker_b.url("/books/mcp"), "PROTOCOL_VERSION": "2026-07-28"}, interceptors=[])
    # carol may add books (demo.add_book); not bob: the production tier runs this beside the admin tests,
    # which take bob's group away (tests/production/test_workers_round_robin.py)
    headers = {"Authorization": f"Token {worker_a.tokens['carol']}"}
    writer = MCPClient(
        {"URL": worker_a.url("/mcp"), "PROTOCOL_VERSION": "2026-07-28", "HEADERS": headers}, interceptors=[]
    )
    try:
        async with reader.stream_events("book.added", {"author": author}) as stream:
            arrived = asyncio.ensure_future(anext(aiter(stream)))
            await asyncio.wait_for(stream.active.wait(), 30)
            added = await writer.call_tool(
                "import_books", {"books": [{"title": author, "author": author, "year": 2026}]}
            )
            assert not added.get("isError"), added
            pushed = await asyncio.wait_for(arrived, 8)  # under the 15 s heartbeat
    finally:
        await pool.aclose()

    assert pushed["name"] == "book.added"
    assert pushed["data"]["author"] == author
