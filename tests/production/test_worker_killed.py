"""A worker killed with SIGKILL in the middle of a load: the other one carries on, and the audit trail holds.

Calls go through the round-robin to two workers on PostgreSQL; when a third of them have been
answered, the daphne worker is killed. Every call a client saw succeed has exactly one audit row
(written before its reply left), a call cut off by the kill has at most one, and no row names a
call nobody made.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections import Counter

import httpx2
import pytest

from tests.live.test_audit_faults import markers
from tests.production.site import ProductionSite, audit_rows, stateless_call

pytestmark = pytest.mark.production

CALLS = 240
CONCURRENCY = 16


async def test_each_answered_call_has_exactly_one_audit_row_after_a_worker_is_killed_mid_load(
    production: ProductionSite,
) -> None:
    env = production.database()
    queries = markers(CALLS)
    answered: list[str] = []
    cut_off: list[str] = []
    with production.workers(env) as site:
        victim = site.workers[0].process
        slots = asyncio.Semaphore(CONCURRENCY)

        async def call(client: httpx2.AsyncClient, number: int, query: str) -> None:
            body, headers = stateless_call("search_books", {"query": query}, site.tokens["carol"], id=number)
            async with slots:
                try:
                    response = await client.post(site.url("/mcp"), json=body, headers=headers)
                except httpx2.TransportError:
                    cut_off.append(query)
                    return
            if response.status_code == 200 and response.json()["result"]["content"][0]["text"] == (
                f"No book matches '{query}'."
            ):
                answered.append(query)
                if len(answered) == CALLS // 3 and victim.poll() is None:
                    os.kill(victim.pid, signal.SIGKILL)
            else:
                cut_off.append(query)

        async with httpx2.AsyncClient(timeout=60) as client:
            await asyncio.gather(*(call(client, number, query) for number, query in enumerate(queries)))
        assert victim.wait(timeout=10) == -signal.SIGKILL
        rows = audit_rows(env["MCP_EXAMPLE_DATABASE_URL"])

    assert len(answered) + len(cut_off) == CALLS
    assert len(answered) > CALLS // 3, "the surviving worker did not carry on"
    assert Counter({query: rows[query] for query in answered}) == Counter(answered)
    assert all(rows[query] <= 1 for query in cut_off), {query: rows[query] for query in cut_off if rows[query] > 1}
    assert set(rows) <= set(queries), set(rows) - set(queries)
    print(f"{len(answered)} answered, {len(cut_off)} cut off by the kill, {sum(rows.values())} audit rows")
