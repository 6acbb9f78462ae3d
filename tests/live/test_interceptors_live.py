"""The demo's interceptors through the official ``mcp`` client: redaction reaches the tool, the call is audited."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from tests.conftest import LiveServer
from tests.live.database_support import server_database
from tests.live.test_official_client import client, text_of
from tests.live.words import unique_word

pytestmark = pytest.mark.live

AUDIT_WAIT_S = 10.0


def audit_rows(env: dict[str, str], marker: str) -> list[tuple[Any, ...]]:
    """The audit rows whose arguments mention `marker`, waiting (boundedly) for the background writer."""
    deadline = time.monotonic() + AUDIT_WAIT_S
    while True:
        with server_database(env) as database:
            rows = database.rows(
                "SELECT tool, CAST(arguments AS TEXT), outcome, origin FROM mcp_django_toolcallrecord"
                " WHERE CAST(arguments AS TEXT) LIKE ?",
                (f"%{marker}%",),
            )
        if rows or time.monotonic() > deadline:
            return rows
        time.sleep(0.05)  # the row is written by another process: poll it, bounded by the deadline


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_redacted_call_reaches_the_tool_and_lands_in_the_audit_trail(
    example_server: LiveServer, live_server_env: dict[str, str], mode: str
) -> None:
    marker = unique_word()
    async with client(example_server, mode) as session:
        result = await session.call_tool("search_books", {"query": f"{marker} ada@example.com"})
    assert text_of(result) == f"No book matches '{marker} [REDACTED]'."
    rows = audit_rows(live_server_env, marker)
    assert len(rows) == 1
    tool, arguments, outcome, origin = rows[0]
    assert (tool, outcome, origin) == ("search_books", "ok", "agent")
    assert json.loads(arguments)["query"] == f"{marker} [REDACTED]"
