"""Sessions stay bounded, against the example project under daphne on a database of its own: oversized
client info refused, caps per user and for anonymous callers, expired rows purged by the server and by
`manage.py mcp_clearsessions`."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.conftest import ROOT, LiveServer, fresh_database, serve_example
from tests.live.database_support import server_database

pytestmark = pytest.mark.live

LIMITS = {"SESSION_MAX_PER_USER": 2, "SESSION_MAX_ANONYMOUS": 2, "SESSION_PURGE_INTERVAL": 0}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.fixture(scope="module")
def env(seeded_database: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A fresh database (sessions of other tests would count against the caps) and the caps above."""
    import os

    database = fresh_database(seeded_database, tmp_path_factory.mktemp("sessions-db"))
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.live.limits_settings",
        "MCP_EXAMPLE_DB": str(database),
        "MCP_TEST_LIMITS": json.dumps(LIMITS),
        "PYTHONUNBUFFERED": "1",
    }


@pytest.fixture(scope="module")
def server(env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with serve_example(env, tmp_path_factory.mktemp("sessions-log")) as live:
        yield live


def initialize(server: LiveServer, path: str, token: str | None = None, **client: Any) -> httpx2.Response:
    params = {
        "protocolVersion": "2025-06-18",
        "capabilities": client.get("capabilities", {}),
        "clientInfo": client.get("clientInfo", {"name": "tests", "version": "1"}),
    }
    headers = dict(HEADERS)
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    body = {"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": params}
    return httpx2.post(server.url(path), json=body, headers=headers, timeout=30)


def rows(env: dict[str, str], where: str = "1 = 1") -> int:
    with server_database(env) as database:
        ((count,),) = database.rows(f"SELECT COUNT(*) FROM mcp_django_mcpsession WHERE {where}")
    return int(count)


def expire_all(env: dict[str, str]) -> None:
    with server_database(env) as database:
        database.execute("UPDATE mcp_django_mcpsession SET expires_at = '2001-01-01 00:00:00'")


def test_oversized_client_info_is_refused_and_stores_nothing(server: LiveServer, env: dict[str, str]) -> None:
    before = rows(env)
    huge = {"name": "tests", "version": "1", "description": "x" * 1_500_000}

    response = initialize(server, "/conformance/mcp", clientInfo=huge, capabilities={"experimental": {"y": {}}})

    assert response.status_code == 200
    assert "Mcp-Session-Id" not in response.headers
    assert response.json() == {
        "jsonrpc": "2.0",
        "id": 7,
        "error": {
            "code": -32602,
            "message": "Invalid params: clientInfo and capabilities take 1500072 bytes; at most 65536 are kept",
        },
    }
    assert rows(env) == before


def test_a_user_past_the_session_cap_is_refused_until_one_ends(server: LiveServer, env: dict[str, str]) -> None:
    token = server.tokens["bob"]
    first, second = (initialize(server, "/mcp", token) for _ in range(2))

    refused = initialize(server, "/mcp", token)
    other_user = initialize(server, "/mcp", server.tokens["carol"])
    ended = httpx2.delete(
        server.url("/mcp"),
        headers={"Authorization": f"Bearer {token}", "Mcp-Session-Id": first.headers["Mcp-Session-Id"]},
    )
    again = initialize(server, "/mcp", token)

    assert second.status_code == 200
    assert refused.status_code == 429
    assert refused.json()["error"] == {
        "code": -32600,
        "message": "Too Many Sessions: at most 2 open sessions for one user; end one (DELETE) or let one expire",
    }
    assert other_user.status_code == 200
    assert ended.status_code == 204
    assert "Mcp-Session-Id" in again.headers


def test_anonymous_callers_share_one_cap_and_expired_sessions_are_purged_on_open(
    server: LiveServer, env: dict[str, str]
) -> None:
    expire_all(env)  # what the other tests opened no longer counts, and is purged by the next open
    opened = [initialize(server, "/conformance/mcp") for _ in range(2)]
    assert rows(env, "expires_at = '2001-01-01 00:00:00'") == 0

    refused = initialize(server, "/conformance/mcp")

    assert [response.status_code for response in opened] == [200, 200]
    assert refused.status_code == 429
    assert refused.json()["error"]["message"].startswith(
        "Too Many Sessions: at most 2 open sessions for one anonymous client address"
    )


def test_mcp_clearsessions_deletes_the_expired_sessions_only(server: LiveServer, env: dict[str, str]) -> None:
    initialize(server, "/mcp", server.tokens["alice"])
    expire_all(env)
    live = initialize(server, "/mcp", server.tokens["alice"])  # purges the expired ones, opens one
    initialize(server, "/mcp", server.tokens["carol"])
    with server_database(env) as database:
        database.execute(
            "UPDATE mcp_django_mcpsession SET expires_at = '2001-01-01 00:00:00' WHERE session_id != ?",
            (live.headers["Mcp-Session-Id"],),
        )
    expired = rows(env, "expires_at = '2001-01-01 00:00:00'")

    result = subprocess.run(
        [sys.executable, "manage.py", "mcp_clearsessions"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )

    assert expired >= 1
    assert result.stdout.strip() == f"{expired} expired MCP session(s) deleted."
    assert rows(env) == 1
