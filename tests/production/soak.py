"""`make soak`: mixed traffic against two workers behind the round-robin for a while, then a report.

    python -m tests.production.soak --seconds 600 --clients 8

The production shape of tests/production/ (daphne and uvicorn on a throwaway PostgreSQL cluster and
Redis, behind HAProxy) takes, for `--seconds`: stateless tool calls and lists, handshake sessions
opened, used and closed, calls streamed over SSE with progress, GET streams opened and dropped, and an
admin switching a provider off and on. It reports the errors (zero expected), each worker's memory
(RSS) at the start and the end, and the audit rows against the calls the clients saw succeed. It exits
1 when there was an error or the audit trail does not match.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2

from tests.conftest import LiveServer
from tests.http_support import ACCEPT, initialize, request, stateless, stateless_headers
from tests.live.admin_support import AdminUser
from tests.live.test_audit_faults import markers
from tests.production.site import ProductionSite, RoundRobin, audit_rows, stateless_call
from tests.services_support import postgres_cluster, redis_server

ADMIN_EVERY_S = 5.0


@dataclass
class Tally:
    """What the clients did and saw."""

    operations: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    examples: list[str] = field(default_factory=list)
    searched: list[str] = field(default_factory=list)
    reindexed: int = 0

    def error(self, kind: str, detail: str) -> None:
        self.errors[kind] += 1
        if len(self.examples) < 20:
            self.examples.append(f"{kind}: {detail[:300]}")


def rss_kib(pid: int) -> int:
    """The resident set size of process `pid` in KiB (Linux)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


class Client:
    """One simulated MCP client: a random mix of operations through the round-robin."""

    def __init__(self, site: RoundRobin, http: httpx2.AsyncClient, tally: Tally) -> None:
        self.site, self.http, self.tally = site, http, tally
        self.auth = {"Authorization": f"Bearer {site.tokens['carol']}", "Accept": ACCEPT}

    async def run(self, until: float) -> None:
        operations = [self.search, self.search, self.search, self.lists, self.session, self.streamed, self.listen]
        while time.monotonic() < until:
            operation = random.choice(operations)
            try:
                await operation()
                self.tally.operations[operation.__name__] += 1
            except httpx2.HTTPError as error:
                self.tally.error(f"{operation.__name__}: {type(error).__name__}", str(error))
            except (AssertionError, KeyError, ValueError) as error:
                self.tally.error(operation.__name__, repr(error))

    async def search(self) -> None:
        (query,) = markers(1)
        body, headers = stateless_call("search_books", {"query": query}, self.site.tokens["carol"])
        response = await self.http.post(self.site.url("/mcp"), json=body, headers=headers)
        assert response.status_code == 200, (response.status_code, response.text)
        assert response.json()["result"]["content"][0]["text"] == f"No book matches '{query}'.", response.text
        self.tally.searched.append(query)

    async def lists(self) -> None:
        for path, method in (("/mcp", "tools/list"), ("/mcp/adapter", "tools/list"), ("/mcp", "resources/list")):
            headers = {**self.auth, "Content-Type": "application/json", **stateless_headers(method)}
            response = await self.http.post(self.site.url(path), json=stateless(method), headers=headers)
            assert response.status_code == 200, (response.status_code, response.text)
            assert "result" in response.json(), response.text

    async def _open(self) -> dict[str, str]:
        headers = {**self.auth, "Content-Type": "application/json"}
        opened = await self.http.post(self.site.url("/mcp"), json=initialize(), headers=headers)
        assert opened.status_code == 200, (opened.status_code, opened.text)
        session = {**headers, "Mcp-Session-Id": opened.headers["mcp-session-id"], "MCP-Protocol-Version": "2025-11-25"}
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        done = await self.http.post(self.site.url("/mcp"), json=initialized, headers=session)
        assert done.status_code == 202, (done.status_code, done.text)
        return session

    async def _close(self, session: dict[str, str]) -> None:
        closed = await self.http.delete(self.site.url("/mcp"), headers=session)
        assert closed.status_code == 204, (closed.status_code, closed.text)

    async def session(self) -> None:
        """A handshake session: open, list, call, ping, close; each request to the next worker."""
        session = await self._open()
        listed = await self.http.post(self.site.url("/mcp"), json=request("tools/list", id=2), headers=session)
        assert listed.status_code == 200, (listed.status_code, listed.text)
        assert "result" in listed.json(), listed.text
        (query,) = markers(1)
        call = request("tools/call", {"name": "search_books", "arguments": {"query": query}}, id=3)
        called = await self.http.post(self.site.url("/mcp"), json=call, headers=session)
        assert called.status_code == 200, (called.status_code, called.text)
        assert called.json()["result"]["content"][0]["text"] == f"No book matches '{query}'.", called.text
        self.tally.searched.append(query)
        pinged = await self.http.post(self.site.url("/mcp"), json=request("ping", id=4), headers=session)
        assert pinged.status_code == 200, (pinged.status_code, pinged.text)
        await self._close(session)

    async def streamed(self) -> None:
        """A call answered over SSE: three progress notifications, then the result."""
        session = await self._open()
        params = {"name": "reindex_catalogue", "arguments": {"steps": 3}, "_meta": {"progressToken": "soak"}}
        seen: list[dict[str, Any]] = []
        async with self.http.stream(
            "POST", self.site.url("/mcp"), json=request("tools/call", params, id=2), headers=session
        ) as response:
            assert response.status_code == 200, response.status_code
            async for line in response.aiter_lines():
                if line.startswith("data:") and line[5:].strip():
                    seen.append(json.loads(line[5:]))
        progress = [message for message in seen if message.get("method") == "notifications/progress"]
        assert len(progress) == 3, seen
        assert seen[-1]["result"]["content"][0]["text"] == "Reindexed the catalogue in 3 batches.", seen
        self.tally.reindexed += 1
        await self._close(session)

    async def listen(self) -> None:
        """A session's GET stream of notifications, opened, held a moment and dropped.

        A stream whose headers had not come when it was dropped is counted apart (`listen_before_headers`):
        until issue 13.10 lands, a GET stream sends its status line with its first event.
        """
        session = await self._open()
        headers_seen = False
        with contextlib.suppress(TimeoutError):
            async with (
                asyncio.timeout(random.uniform(0.2, 1.0)),
                self.http.stream("GET", self.site.url("/mcp"), headers=session) as response,
            ):
                headers_seen = True
                assert response.status_code == 200, response.status_code
                async for _ in response.aiter_bytes():
                    pass
        if not headers_seen:
            self.tally.operations["listen_before_headers"] += 1
        await self._close(session)


def switch(worker: LiveServer, enabled: bool) -> None:
    AdminUser(worker).switch_provider("demo.books", enabled=enabled)


async def admin_switches(site: RoundRobin, tally: Tally, until: float) -> None:
    """The admin turning the demo.books provider off and on, every few seconds, on alternating workers."""
    enabled = True
    while time.monotonic() < until:
        await asyncio.sleep(ADMIN_EVERY_S)
        worker = site.workers[tally.operations["admin_switch"] % len(site.workers)]
        enabled = not enabled
        try:
            await asyncio.to_thread(switch, worker, enabled)
            tally.operations["admin_switch"] += 1
        except Exception as error:
            tally.error("admin_switch", repr(error))
    if not enabled:
        await asyncio.to_thread(switch, site.workers[0], True)


async def soak(site: RoundRobin, seconds: float, clients: int, tally: Tally) -> None:
    until = time.monotonic() + seconds
    async with httpx2.AsyncClient(timeout=60) as http:
        simulated = [Client(site, http, tally) for _ in range(clients)]
        await asyncio.gather(admin_switches(site, tally, until), *(client.run(until) for client in simulated))


def report(env: dict[str, str], tally: Tally, rss: dict[str, tuple[int, int]], seconds: float) -> bool:
    rows = audit_rows(env["MCP_EXAMPLE_DATABASE_URL"])
    reindex_rows = audit_rows(env["MCP_EXAMPLE_DATABASE_URL"], tool="reindex_catalogue")
    searched = Counter(tally.searched)
    missing = sum(1 for query in searched if rows[query] < searched[query])
    extra = sum(max(0, rows[query] - searched[query]) for query in rows)
    reindex_rows_total = sum(reindex_rows.values())
    print(f"soak: {seconds:.0f} s of mixed traffic, two workers (daphne, uvicorn) behind HAProxy, PostgreSQL, Redis")
    print("operations: " + ", ".join(f"{name} {count}" for name, count in sorted(tally.operations.items())))
    print(f"errors: {sum(tally.errors.values())}" + "".join(f"\n  {line}" for line in tally.examples))
    for log_name, (start, end) in rss.items():  # daphne-<port>.log, uvicorn-<port>.log
        print(f"memory {log_name.split('-')[0]}: RSS {start / 1024:.1f} MiB at start, {end / 1024:.1f} MiB at end")
    print(
        f"audit: search_books calls answered {len(tally.searched)}, rows {sum(rows.values())} "
        f"(missing {missing}, extra {extra}); reindex_catalogue calls {tally.reindexed}, rows {reindex_rows_total}"
    )
    return not tally.errors and missing == 0 and extra == 0 and reindex_rows_total == tally.reindexed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--seconds", type=float, default=600.0, help="how long the traffic lasts (default 600)")
    parser.add_argument("--clients", type=int, default=8, help="simulated clients at once (default 8)")
    options = parser.parse_args()
    with (
        tempfile.TemporaryDirectory(prefix="mcp-django-soak-") as directory,
        postgres_cluster() as cluster,
        redis_server() as redis_url,
    ):
        production = ProductionSite(cluster, redis_url, Path(directory))
        env = production.database()
        tally = Tally()
        with production.workers(env) as site:
            asyncio.run(soak(site, min(options.seconds, 5.0), options.clients, tally))  # warm-up, then measure
            start = [rss_kib(worker.process.pid) for worker in site.workers]
            asyncio.run(soak(site, options.seconds, options.clients, tally))
            end = [rss_kib(worker.process.pid) for worker in site.workers]
            names = [worker.log_path.name for worker in site.workers]
            rss = {name: (before, after) for name, before, after in zip(names, start, end, strict=True)}
            passed = report(env, tally, rss, options.seconds)
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
