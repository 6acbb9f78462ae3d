"""E-2 over a real socket (issue 36): a megabyte argument built to make the old e-mail pattern backtrack,
sent to the demo's `/mcp` (redaction on, daphne), leaves the worker answering: a `tools/list` (the
2026-07-28 era has no `ping`) sent while it is redacted is answered within five seconds, every time, and
the call itself is answered (redacted first, then refused by `search_books`, whose query takes 200 characters).

The pattern it replaced took time quadratic in a run of address characters: 100 KB froze the worker for 30 s,
this argument for hours.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.conftest import LiveServer, fresh_database, serve_example

pytestmark = pytest.mark.live

LIST_BOUND_S = 5.0
"""Unloaded, a listing is answered in well under a second; the bound leaves room for a machine running the
live tier in two workers (a listing took over a second there), and the old pattern froze the worker for hours."""
CALL_BOUND_S = 240.0
ADVERSARIAL = "a" * 400_000 + "a@" * 150_000 + "+1(" * 50_000 + "x@yy." * 20_000 + " ada@example.com"
"""About a megabyte: the runs each built-in pattern (old or new) finds hardest, and one address to redact."""


@pytest.fixture(scope="module")
def server(seeded_database: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """The demo on a database of its own: the call's audit row is a megabyte."""
    import os

    database = fresh_database(seeded_database, tmp_path_factory.mktemp("redaction-db"))
    env = {**os.environ, "MCP_EXAMPLE_DB": str(database), "PYTHONUNBUFFERED": "1"}
    with serve_example(env, tmp_path_factory.mktemp("redaction-log")) as live:
        yield live


def stateless(method: str, params: dict[str, Any], token: str, name: str | None = None) -> dict[str, Any]:
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "tests", "version": "1"},
    }
    headers = {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "Authorization": f"Bearer {token}",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": method,
    }
    if name is not None:
        headers["Mcp-Name"] = name
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": meta}}
    return {"content": json.dumps(body).encode(), "headers": headers}


async def test_e2_a_megabyte_adversarial_argument_leaves_the_worker_listing_tools_within_seconds(
    server: LiveServer,
) -> None:
    token = server.tokens["alice"]
    call = stateless("tools/call", {"name": "search_books", "arguments": {"query": ADVERSARIAL}}, token, "search_books")
    listing = stateless("tools/list", {}, token)
    latencies: list[float] = []
    async with httpx2.AsyncClient(timeout=CALL_BOUND_S) as caller, httpx2.AsyncClient() as lister:
        answer = asyncio.create_task(caller.post(server.url("/mcp"), **call))
        while not answer.done():
            started = time.monotonic()
            listed = await lister.post(server.url("/mcp"), timeout=LIST_BOUND_S, **listing)
            latencies.append(time.monotonic() - started)
            assert "tools" in listed.json()["result"], listed.text
        response = await answer

    refusal = response.json()["result"]  # redacted first, then refused by the tool's own argument rules
    assert refusal["content"][0]["text"].endswith("query: String should have at most 200 characters")
    assert latencies
    assert max(latencies) < LIST_BOUND_S
