"""E-1 over real sockets (issue 36): a flood of anonymous `initialize`s, each with a 60 KB `clientInfo`, against
the demo under daphne with the package's default cap (100 open sessions per anonymous client address; the demo
raises it for the conformance suite). Past it each is refused with a JSON-RPC error saying so; the worker's
peak resident memory stays under 300 MB, and a `ping` in another session, sent all along, is answered within a
second every time.

Before, sessions were uncapped by default: 11,520 opened in 90 s, the database grew 660 MB and the worker
735 MB.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from mcp_django.conf import DEFAULTS
from tests.conftest import LiveServer, fresh_database, serve_example
from tests.live.test_oauth_limits_live import peak_rss_mb

pytestmark = pytest.mark.live

CAP = DEFAULTS["SESSION_MAX_ANONYMOUS"]
FLOOD = 160
AT_ONCE = 8
PING_BOUND_S = 1.0
PEAK_RSS_LIMIT_MB = 300
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
BIG_CLIENT = {"name": "flood", "version": "1", "description": "x" * 60_000}


@pytest.fixture(scope="module")
def server(seeded_database: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """The demo with the package's default cap, on a database of its own (no other test's sessions count)."""
    database = fresh_database(seeded_database, tmp_path_factory.mktemp("flood-db"))
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.live.limits_settings",
        "MCP_TEST_LIMITS": json.dumps({"SESSION_MAX_ANONYMOUS": DEFAULTS["SESSION_MAX_ANONYMOUS"]}),
        "MCP_EXAMPLE_DB": str(database),
        "PYTHONUNBUFFERED": "1",
    }
    with serve_example(env, tmp_path_factory.mktemp("flood-log")) as live:
        yield live


def initialize(client_info: dict[str, Any]) -> dict[str, Any]:
    params = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": client_info}
    return {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}


async def test_e1_a_flood_of_big_anonymous_initializes_is_refused_past_the_cap_and_the_worker_keeps_answering(
    server: LiveServer,
) -> None:
    url = server.url("/conformance/mcp")
    latencies: list[float] = []
    async with httpx2.AsyncClient(timeout=60) as http:
        opened = await http.post(url, json=initialize({"name": "pinger", "version": "1"}), headers=HEADERS)
        session = {**HEADERS, "Mcp-Session-Id": opened.headers["Mcp-Session-Id"], "MCP-Protocol-Version": "2025-06-18"}
        flooding = True

        async def ping_all_along() -> None:
            while flooding:
                started = time.monotonic()
                pong = await http.post(url, json={"jsonrpc": "2.0", "id": 2, "method": "ping"}, headers=session)
                latencies.append(time.monotonic() - started)
                assert pong.json() == {"jsonrpc": "2.0", "id": 2, "result": {}}

        async def flood(count: int) -> list[httpx2.Response]:
            return [await http.post(url, json=initialize(BIG_CLIENT), headers=HEADERS) for _ in range(count)]

        pinger = asyncio.create_task(ping_all_along())
        answers = [
            answer
            for batch in await asyncio.gather(*(flood(FLOOD // AT_ONCE) for _ in range(AT_ONCE)))
            for answer in batch
        ]
        flooding = False
        await pinger
        past = await http.post(url, json=initialize(BIG_CLIENT), headers=HEADERS)

    opened_by_flood = sum(1 for answer in answers if "Mcp-Session-Id" in answer.headers)
    assert opened_by_flood <= CAP - 1 + AT_ONCE  # the pinger's session counts; concurrent opens overshoot a little
    assert {answer.status_code for answer in answers} == {200, 429}
    assert past.status_code == 429
    assert past.json()["error"] == {
        "code": -32600,
        "message": f"Too Many Sessions: at most {CAP} open sessions for one anonymous client address;"
        " end one (DELETE) or let one expire",
    }
    assert max(latencies) < PING_BOUND_S
    assert peak_rss_mb(server) < PEAK_RSS_LIMIT_MB
