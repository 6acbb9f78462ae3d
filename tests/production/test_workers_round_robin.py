"""Two workers (daphne and uvicorn) on PostgreSQL and the Redis channel layer, behind a round-robin.

A session opened on one worker continues on the other; a tool's question to the client and the
client's answer cross workers (tests/live/test_two_workers.py); the admin's switches and revocations,
and changes made by a third process, reach both workers within a second (tests/live/test_admin_two_workers.py).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest

from tests.conftest import LiveServer
from tests.http_support import ACCEPT, initialize, request, stateless, stateless_headers
from tests.live.test_admin_two_workers import *  # collected here, against the fixtures below
from tests.live.test_two_workers import *
from tests.production.site import ProductionSite, RoundRobin

pytestmark = pytest.mark.production


@pytest.fixture(scope="module")  # type: ignore[no-redef]  # replaces the imported fixture
def workers_env(production: ProductionSite) -> dict[str, str]:
    """A database of this module's own: the admin tests switch providers off and delete a token."""
    return production.database()


@pytest.fixture(scope="module")
def site(production: ProductionSite, workers_env: dict[str, str]) -> Iterator[RoundRobin]:
    with production.workers(workers_env) as running:
        yield running


@pytest.fixture(scope="module")  # type: ignore[no-redef]  # replaces the imported fixture
def two_workers(site: RoundRobin) -> tuple[LiveServer, LiveServer]:
    first, second = site.workers
    return first, second


def _headers(server: LiveServer, user: str = "carol", **extra: str) -> dict[str, str]:
    return {
        "Content-Type": "application/json",
        "Accept": ACCEPT,
        "Authorization": f"Bearer {server.tokens[user]}",
        **extra,
    }


def test_the_round_robin_sends_consecutive_requests_to_alternate_workers(site: RoundRobin) -> None:
    body = json.dumps(stateless("tools/list")).encode()
    with httpx2.Client(timeout=30) as client:  # one keep-alive connection to the balancer
        answered_by = [
            client.post(site.url("/mcp"), content=body, headers=_headers(site, **stateless_headers("tools/list")))
            for _ in range(4)
        ]
    assert [response.status_code for response in answered_by] == [200] * 4
    workers = [response.headers["x-worker"] for response in answered_by]
    assert workers[0] != workers[1]
    assert workers[0::2] == [workers[0]] * 2
    assert workers[1::2] == [workers[1]] * 2


def test_a_session_opened_on_one_worker_continues_on_the_other_and_ends_on_both_within_a_second(
    two_workers: tuple[LiveServer, LiveServer],
) -> None:
    daphne, uvicorn = two_workers
    with httpx2.Client(timeout=30) as client:
        opened = client.post(daphne.url("/mcp"), json=initialize(), headers=_headers(daphne))
        assert opened.status_code == 200, daphne.log_tail()
        session = _headers(
            daphne, **{"Mcp-Session-Id": opened.headers["mcp-session-id"], "MCP-Protocol-Version": "2025-11-25"}
        )
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert client.post(uvicorn.url("/mcp"), json=initialized, headers=session).status_code == 202

        call = request("tools/call", {"name": "search_books", "arguments": {"query": "Le Guin"}}, id=2)
        called = client.post(uvicorn.url("/mcp"), json=call, headers=session)
        assert called.status_code == 200, uvicorn.log_tail()
        assert "The Dispossessed" in called.json()["result"]["content"][0]["text"]
        assert client.post(daphne.url("/mcp"), json=request("ping", id=3), headers=session).status_code == 200

        assert client.delete(uvicorn.url("/mcp"), headers=session).status_code == 204
        # The other worker forgets its cached copy when it sees the "sessions" stamp move (STATE_CHECK_INTERVAL).
        started = time.monotonic()
        while (
            status := client.post(daphne.url("/mcp"), json=request("ping", id=4), headers=session).status_code
        ) != 404:
            assert time.monotonic() - started < DEADLINE_S, f"still {status} after {time.monotonic() - started:.2f}s"


def _messages(text: str) -> list[dict[str, Any]]:
    """The JSON-RPC messages of an SSE body (the priming event's data is empty)."""
    return [json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:") and line[5:].strip()]


def test_a_stream_closed_mid_call_on_one_worker_is_resumed_on_the_other(
    two_workers: tuple[LiveServer, LiveServer],
) -> None:
    for owner, other in (two_workers, two_workers[::-1]):
        headers = {"Accept": ACCEPT, "Content-Type": "application/json"}
        with httpx2.Client(timeout=30) as client:
            opened = client.post(owner.url("/conformance/mcp"), json=initialize(), headers=headers)
            session_id = opened.headers["mcp-session-id"]
            session = {**headers, "Mcp-Session-Id": session_id, "MCP-Protocol-Version": "2025-11-25"}
            initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            client.post(owner.url("/conformance/mcp"), json=initialized, headers=session)

            call = request("tools/call", {"name": "test_reconnection", "arguments": {}}, id=2)
            closed = client.post(owner.url("/conformance/mcp"), json=call, headers=session)  # ends after one message
            assert [message.get("params", {}).get("data") for message in _messages(closed.text)] == [
                "Before disconnect"
            ], closed.text
            last_event_id = [line[3:].strip() for line in closed.text.splitlines() if line.startswith("id:")][-1]

            resumed = client.get(other.url("/conformance/mcp"), headers={**session, "Last-Event-ID": last_event_id})
        assert resumed.status_code == 200, other.log_tail()
        rest = _messages(resumed.text)
        assert [message.get("params", {}).get("data") for message in rest[:-1]] == ["After reconnect"], resumed.text
        assert rest[-1]["result"]["content"][0]["text"] == "Reconnection test completed", resumed.text
