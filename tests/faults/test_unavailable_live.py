"""An unavailable database against a real daphne: 503, Retry-After and the request's id, then service again (13.9).

The fault is real: another connection holds SQLite's exclusive lock on the server's database (in the
default rollback-journal mode, so reads wait too) for longer than the server's lock timeout.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from mcp_django.interceptors.audit import AuditUnavailable
from mcp_django.protocol.errors import ServiceUnavailable
from tests.conftest import LiveServer
from tests.faults.test_faults_live import faults_server
from tests.http_support import ACCEPT, stateless, stateless_headers

pytestmark = pytest.mark.live

WAIT_S = 60.0
FAST = {"AUDIT_DB_TIMEOUT": 0.25, "AUDIT_REPLAY_INTERVAL": 0.1}


@contextlib.contextmanager
def exclusive_lock(database: Path) -> Iterator[None]:
    """Another connection holding SQLite's exclusive lock on `database` until the block ends."""
    connection = sqlite3.connect(database, timeout=20, isolation_level=None)
    try:
        connection.execute("BEGIN EXCLUSIVE")
        yield
    finally:
        connection.rollback()
        connection.close()


def search(server: LiveServer, path: str, request_id: Any, user: str = "bob") -> httpx2.Response:
    """A 2026-07-28 `search_books` call as `user`, over a new connection."""
    body = stateless("tools/call", {"name": "search_books", "arguments": {"query": "Dune"}}, id=request_id)
    headers = {
        "Accept": ACCEPT,
        "Content-Type": "application/json",
        **stateless_headers("tools/call", "search_books"),
        "Authorization": f"Token {server.tokens[user]}",
    }
    return httpx2.post(server.url(path), content=json.dumps(body), headers=headers, timeout=WAIT_S)


def until_served(server: LiveServer, path: str) -> httpx2.Response:
    deadline = time.monotonic() + WAIT_S
    while (response := search(server, path, "again")).status_code != 200:
        assert time.monotonic() < deadline, f"still {response.status_code} {response.text}:\n{server.log_tail()}"
        time.sleep(0.05)
    return response


def assert_unavailable(response: httpx2.Response, request_id: Any, message: str, reason: str) -> None:
    assert response.status_code == 503, response.text
    assert response.headers["Retry-After"] == "5"
    assert response.json() == {
        "jsonrpc": "2.0",
        "id": request_id,
        "error": {"code": -32603, "message": message, "data": {"reason": reason}},
    }


@pytest.mark.parametrize("path", ["/mcp", "/faults/view/mcp"], ids=["fast-path", "view"])
def test_a_locked_database_is_a_503_with_retry_after_and_the_request_id_until_the_lock_goes(
    live_server_env: dict[str, str], tmp_path: Path, path: str
) -> None:
    with faults_server(live_server_env, tmp_path, FAST, MCP_TEST_DB_TIMEOUT="0.3") as (server, _):
        assert search(server, path, 1).status_code == 200  # token and scope now cached, as in the steady state
        with exclusive_lock(tmp_path / "db.sqlite3"):
            during = search(server, path, "during-the-lock")
            cold = search(server, path, 2, user="alice")  # her token is not cached: admission reads the database

        assert_unavailable(during, "during-the-lock", ServiceUnavailable.default_message, "database_unavailable")
        assert_unavailable(cold, 2, ServiceUnavailable.default_message, "database_unavailable")
        assert "Dune" in until_served(server, path).json()["result"]["content"][0]["text"]
    assert "Database unavailable, answering 503: OperationalError: database is locked" in server.log_tail()


def test_a_full_audit_spool_refuses_calls_with_a_503_until_the_database_is_back(
    live_server_env: dict[str, str], tmp_path: Path
) -> None:
    settings = {**FAST, "AUDIT_SPOOL_MAX_BYTES": 1, "AUDIT_WHEN_FULL": "refuse"}
    with faults_server(live_server_env, tmp_path, settings) as (server, _):
        database = tmp_path / "db.sqlite3"
        with contextlib.closing(sqlite3.connect(database)) as connection:
            connection.execute("PRAGMA journal_mode=WAL")  # reads go on: only the audit trail cannot write
        assert search(server, "/mcp", 1).status_code == 200
        with exclusive_lock(database):
            assert search(server, "/mcp", 2).status_code == 200  # spooled, past the bound: the spool is now full
            refused = search(server, "/mcp", 3)

        assert_unavailable(refused, 3, AuditUnavailable.default_message, "audit_unavailable")
        until_served(server, "/mcp")
