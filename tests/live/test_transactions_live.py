"""A tool call is a unit of work on every transport, like a view under `ATOMIC_REQUESTS`: the example project
under daphne with `MCP_EXAMPLE_ATOMIC_REQUESTS=1`, its own copy of the demo database, and the demo's
`import_books`, which adds books one by one and refuses a title already in the catalogue.

Each test adds a new book and then Dune (seeded), over the fast path, the Django view (a session cookie
sends /mcp through Django) and WebSocket: the new book is not in the database afterwards, and the audit
trail still has the call's row. Waits are bounded by deadlines.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.conftest import LiveServer, serve_example
from tests.http_support import ACCEPT, stateless, stateless_headers
from tests.live.admin_support import AdminUser
from tests.live.database_support import server_database
from tests.live.websocket_support import WebSocket
from tests.live.words import unique_word

pytestmark = pytest.mark.live

WAIT_S = 20.0
HEADERS = {"Accept": ACCEPT, "Content-Type": "application/json", **stateless_headers("tools/call", "import_books")}


@pytest.fixture(scope="module")
def atomic_server(
    live_server_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[LiveServer, dict[str, str]]]:
    directory = tmp_path_factory.mktemp("atomic")
    env = {**live_server_env, "MCP_EXAMPLE_ATOMIC_REQUESTS": "1"}
    if not env.get("MCP_EXAMPLE_DATABASE_URL"):
        database = directory / "db.sqlite3"
        shutil.copyfile(live_server_env["MCP_EXAMPLE_DB"], database)
        env["MCP_EXAMPLE_DB"] = str(database)
    with serve_example(env, Path(directory)) as server:
        yield server, env


def message(books: list[str]) -> dict[str, Any]:
    arguments = {"books": [{"title": title, "author": "Tester", "year": 2001} for title in books]}
    return stateless("tools/call", {"name": "import_books", "arguments": arguments})


def rows(env: dict[str, str], sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
    with server_database(env) as database:
        return database.rows(sql, params)


def books_titled(env: dict[str, str], title: str) -> int:
    return int(rows(env, "SELECT COUNT(*) FROM demo_book WHERE title = ?", [title])[0][0])


def audited(env: dict[str, str], title: str) -> bool:
    """True once the audit trail has an import_books row whose arguments name `title` (bounded wait)."""
    deadline = time.monotonic() + WAIT_S
    sql = (
        "SELECT COUNT(*) FROM mcp_django_toolcallrecord WHERE tool = 'import_books' AND CAST(arguments AS TEXT) LIKE ?"
    )
    while time.monotonic() < deadline:
        if rows(env, sql, [f"%{title}%"])[0][0]:
            return True
        time.sleep(0.1)
    return False


def fresh_title() -> str:
    return f"Atomic {unique_word()}"


async def test_on_the_fast_path_a_call_that_fails_after_writing_leaves_no_row_but_its_audit_row(
    atomic_server: tuple[LiveServer, dict[str, str]],
) -> None:
    server, env = atomic_server
    lost, kept = fresh_title(), fresh_title()
    headers = {**HEADERS, "Authorization": f"Bearer {server.tokens['bob']}"}
    async with httpx2.AsyncClient(timeout=WAIT_S) as http:
        failed = await http.post(server.url("/mcp"), json=message([lost, "Dune"]), headers=headers)
        added = await http.post(server.url("/mcp"), json=message([kept]), headers=headers)

    assert failed.json()["result"]["isError"] is True, failed.text
    assert "is already in the catalogue" in failed.json()["result"]["content"][0]["text"]
    assert added.json()["result"].get("isError") is not True, added.text
    assert (books_titled(env, lost), books_titled(env, kept)) == (0, 1)
    assert audited(env, lost), server.log_tail()


async def test_through_the_django_view_a_call_that_fails_after_writing_leaves_no_row(
    atomic_server: tuple[LiveServer, dict[str, str]],
) -> None:
    server, env = atomic_server
    cookies = {cookie.name: str(cookie.value) for cookie in AdminUser(server).cookies}
    lost = fresh_title()
    session = f"sessionid={cookies['sessionid']}; csrftoken={cookies['csrftoken']}"
    headers = {**HEADERS, "Cookie": session, "X-CSRFToken": cookies["csrftoken"], "Origin": server.base_url}
    async with httpx2.AsyncClient(timeout=WAIT_S) as http:
        failed = await http.post(server.url("/mcp"), json=message([lost, "Dune"]), headers=headers)

    assert "result" in failed.json(), failed.text
    assert failed.headers["X-Frame-Options"] == "DENY"  # Django's middleware ran: the view served it
    assert failed.json()["result"]["isError"] is True, failed.text
    assert books_titled(env, lost) == 0
    assert audited(env, lost), server.log_tail()


def test_over_websocket_a_call_that_fails_after_writing_leaves_no_row(
    atomic_server: tuple[LiveServer, dict[str, str]],
) -> None:
    server, env = atomic_server
    lost = fresh_title()
    socket = WebSocket(server.base_url, "/ws/mcp", {"Authorization": f"Bearer {server.tokens['bob']}"})
    try:
        reply = socket.request({**message([lost, "Dune"]), "id": "call"})
    finally:
        socket.close()

    assert socket.status == 101
    assert reply["result"]["isError"] is True, reply
    assert books_titled(env, lost) == 0
    assert audited(env, lost), server.log_tail()
