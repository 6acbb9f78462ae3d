"""Idempotency keys over real sockets: the example project under daphne, two workers on one copy of the demo
database, the demo's `import_books` (atomic=True; a title already in the catalogue is refused).

A call whose response the test drops is retried by the official client with the key in `_meta`: the books
are added once. Requests racing one `Idempotency-Key` header at both workers add them once, and each gets the
same answer. A key sent again with other books is refused.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import RequestParamsMeta, TextContent

from mcp_django.safety.idempotency import META_KEY, REPLAYED
from tests.conftest import LiveServer, serve_example
from tests.http_support import ACCEPT, stateless, stateless_headers
from tests.live.admin_support import private_env
from tests.live.database_support import server_database
from tests.live.words import unique_word

pytestmark = pytest.mark.live

WAIT_S = 30.0
RACERS = 6
HEADERS = {"Accept": ACCEPT, "Content-Type": "application/json", **stateless_headers("tools/call", "import_books")}


@pytest.fixture(scope="module")
def two_workers(
    live_server_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[LiveServer, LiveServer, dict[str, str]]]:
    directory = tmp_path_factory.mktemp("idempotency")
    env = private_env(live_server_env, directory)
    with serve_example(env, Path(directory)) as first, serve_example(env, Path(directory)) as second:
        yield first, second, env


def books(title: str) -> dict[str, Any]:
    return {"books": [{"title": title, "author": "Tester", "year": 2001}]}


def books_titled(env: dict[str, str], title: str) -> int:
    with server_database(env) as database:
        return int(database.rows("SELECT COUNT(*) FROM demo_book WHERE title = ?", [title])[0][0])


def fresh(prefix: str) -> str:
    return f"{prefix} {unique_word()}"


def auth(server: LiveServer) -> dict[str, str]:
    return {"Authorization": f"Bearer {server.tokens['bob']}"}


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_call_whose_response_was_dropped_and_is_retried_with_its_key_adds_the_books_once(
    two_workers: tuple[LiveServer, LiveServer, dict[str, str]], mode: str
) -> None:
    first, second, env = two_workers
    title, key = fresh("Retried"), fresh("key")
    message = stateless("tools/call", {"name": "import_books", "arguments": books(title)})
    async with httpx2.AsyncClient(timeout=WAIT_S) as http:  # the response is never read: the test drops it
        headers = {**HEADERS, **auth(first), "Idempotency-Key": key}
        async with http.stream("POST", first.url("/mcp"), json=message, headers=headers):
            pass

    async with create_mcp_http_client(headers=auth(second)) as http:
        transport = streamable_http_client(second.url("/mcp"), http_client=http)
        async with Client(transport, mode=mode, read_timeout_seconds=WAIT_S) as session:
            meta = RequestParamsMeta(**{META_KEY: key})  # type: ignore[typeddict-unknown-key]  # an open map
            retried = await session.call_tool("import_books", books(title), meta=meta)
            again = await session.call_tool("import_books", books(title), meta=meta)

    assert not retried.is_error, retried
    assert isinstance(retried.content[0], TextContent)
    assert retried.content[0].text == "Added 1 books to the catalogue."
    assert again.content == retried.content
    assert again.meta is not None
    assert again.meta[REPLAYED] is True
    assert books_titled(env, title) == 1


async def test_requests_racing_one_idempotency_key_at_two_workers_add_the_books_once(
    two_workers: tuple[LiveServer, LiveServer, dict[str, str]],
) -> None:
    first, second, env = two_workers
    title, key = fresh("Raced"), fresh("key")
    message = stateless("tools/call", {"name": "import_books", "arguments": books(title)})

    async def send(http: httpx2.AsyncClient, server: LiveServer) -> httpx2.Response:
        headers = {**HEADERS, **auth(server), "Idempotency-Key": f'"{key}"'}
        return await http.post(server.url("/mcp"), json=message, headers=headers)

    async with httpx2.AsyncClient(timeout=WAIT_S) as http:
        answers = await asyncio.gather(*(send(http, (first, second)[n % 2]) for n in range(RACERS)))

    results = [answer.json().get("result") for answer in answers]
    assert all(result is not None for result in results), [answer.text for answer in answers]
    assert {result["content"][0]["text"] for result in results} == {"Added 1 books to the catalogue."}
    assert sum(1 for result in results if not result.get("_meta", {}).get(REPLAYED)) == 1
    assert books_titled(env, title) == 1


async def test_a_key_sent_again_with_other_books_is_refused(
    two_workers: tuple[LiveServer, LiveServer, dict[str, str]],
) -> None:
    first, _, env = two_workers
    title, other, key = fresh("Keyed"), fresh("Other"), fresh("key")
    headers = {**HEADERS, **auth(first), "Idempotency-Key": key}
    async with httpx2.AsyncClient(timeout=WAIT_S) as http:
        added = await http.post(
            first.url("/mcp"),
            json=stateless("tools/call", {"name": "import_books", "arguments": books(title)}),
            headers=headers,
        )
        refused = await http.post(
            first.url("/mcp"),
            json=stateless("tools/call", {"name": "import_books", "arguments": books(other)}),
            headers=headers,
        )

    assert added.json()["result"].get("isError") is not True, added.text
    assert refused.status_code == 400
    assert refused.json()["error"]["data"] == {"reason": "idempotency_key_reused"}
    assert (books_titled(env, title), books_titled(env, other)) == (1, 0)
