"""What the audit trail's group commit costs, in process: `tools/call` with no audit, with the audit sink
(the reply waits for its row; concurrent rows share a commit), and with a naive sink that commits each row
on its own before the reply, each at 1 and at 16 concurrent callers, on a SQLite file with its default
rollback journal and in WAL mode with `synchronous=NORMAL`.

    .venv/bin/python benchmarks/bench_audit.py                 # the table (median of interleaved rounds)
    .venv/bin/python benchmarks/bench_audit.py --calls 500 --rounds 3

`measure()` returns the rows of the table (for `make bench`). A benchmark, not a test: nothing asserts
on the numbers.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.bench_settings")
os.environ.setdefault("BENCH_DB", str(Path(tempfile.mkdtemp(prefix="mcp-bench-audit-")) / "db.sqlite3"))

import django

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import close_old_connections, connections  # noqa: E402
from django.db.backends.signals import connection_created  # noqa: E402

from mcp_django import Registry  # noqa: E402
from mcp_django.endpoints import Endpoint  # noqa: E402
from mcp_django.interceptors import Invocation, SinkInterceptor  # noqa: E402
from mcp_django.interceptors.audit import audit_status  # noqa: E402
from mcp_django.protocol import Connection  # noqa: E402

__all__ = ["measure"]

CALLS = 1000
ROUNDS = 3
CONCURRENCY = (1, 16)
AUDIT = "mcp_django.interceptors.audit.AuditSinkInterceptor"

registry = Registry("bench-audit")


@registry.tool
async def echo(text: str) -> str:
    """Echo the text back."""
    return text


_one_thread = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="bench-commit-each-row")


class CommitEachRow(SinkInterceptor):
    """The naive way to commit before the reply: one `INSERT` and one transaction per call, on one long-lived thread."""

    name = "commit-each-row"
    events = ("tools/call",)
    phases = ("response",)

    async def record(self, invocation: Invocation) -> None:
        from mcp_django.models import ToolCallRecord

        context = invocation.context
        request = context.request or {}
        row = {"endpoint": context.endpoint or "", "tool": request.get("name", ""), "outcome": "ok"}
        row |= {"arguments": request.get("arguments") or {}, "duration_ms": 0.0, "trace_id": context.trace_id}

        def create() -> None:
            ToolCallRecord.objects.create(**row)
            close_old_connections()

        await asyncio.get_running_loop().run_in_executor(_one_thread, create)


META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
MESSAGE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "echo", "arguments": {"text": "hello"}, "_meta": META},
}
SINKS: dict[str, list[Any]] = {
    "no audit": [],
    "audit sink (group commit)": [AUDIT],
    "commit each row": [{"CLASS": CommitEachRow}],
}


def _caller(interceptors: list[Any], name: str) -> Callable[[], Awaitable[Any]]:
    endpoint = Endpoint(name, name=name, registry=registry, allow_anonymous=True, interceptors=interceptors)
    connection = Connection(sessions=False, version_header="2026-07-28")

    async def call() -> Any:
        reply = await endpoint.handler.handle(MESSAGE, connection)
        assert "result" in reply, reply
        return reply

    return call


async def _run(call: Callable[[], Awaitable[Any]], calls: int, concurrency: int) -> tuple[float, list[float]]:
    """`calls` calls by `concurrency` callers; (calls per second, each call's latency in ms)."""
    latencies: list[float] = []

    async def caller(count: int) -> None:
        for _ in range(count):
            started = time.perf_counter()
            await call()
            latencies.append((time.perf_counter() - started) * 1000)

    started = time.perf_counter()
    await asyncio.gather(*(caller(calls // concurrency) for _ in range(concurrency)))
    return len(latencies) / (time.perf_counter() - started), latencies


async def _measure(calls: int, rounds: int, concurrency: Sequence[int]) -> list[dict[str, Any]]:
    callers = {label: _caller(sinks, f"bench-audit-{index}") for index, (label, sinks) in enumerate(SINKS.items())}
    for call in callers.values():
        await _run(call, 100, 4)  # warm up: plans, the writer thread, the connections
    samples: dict[tuple[str, int], list[tuple[float, list[float], float]]] = {}
    for _ in range(rounds):  # interleaved, so drift hits every workload alike
        for level in concurrency:
            for label, call in callers.items():
                before = audit_status()
                rate, latencies = await _run(call, calls, level)
                after = audit_status()
                commits = after.commits - before.commits
                per_commit = (after.committed - before.committed) / commits if commits else 0.0
                samples.setdefault((label, level), []).append((rate, latencies, per_commit))
    rows = []
    for (label, level), runs in samples.items():
        latencies = sorted(latency for _, run, _ in runs for latency in run)
        rows.append(
            {
                "workload": label,
                "concurrency": level,
                "calls_per_s": statistics.median(rate for rate, _, _ in runs),
                "p50_ms": latencies[len(latencies) // 2],
                "p99_ms": latencies[int(len(latencies) * 0.99)],
                "rows_per_commit": statistics.median(per for _, _, per in runs),
            }
        )
    return rows


JOURNALS = ("delete", "wal")
"""SQLite's default rollback journal (`synchronous=FULL`: fsyncs on every commit), and WAL with
`synchronous=NORMAL` (a commit survives the process being killed, not a power cut: no fsync)."""


def _wal_normal(sender: Any, connection: Any, **kwargs: Any) -> None:
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA synchronous = NORMAL")


def measure(
    calls: int = CALLS,
    rounds: int = ROUNDS,
    concurrency: Sequence[int] = CONCURRENCY,
    journals: Sequence[str] = JOURNALS,
) -> list[dict[str, Any]]:
    """Migrate the benchmark's SQLite database and return one row per (journal, workload, concurrency).

    Each row: `journal`, `workload`, `concurrency`, `calls_per_s` (median of the rounds), `p50_ms` and
    `p99_ms` (over every call of every round), `rows_per_commit` (the audit sink's group commits; 0 elsewhere).
    """
    call_command("migrate", verbosity=0)
    rows = []
    for journal in journals:
        connections.close_all()
        with connections["default"].cursor() as cursor:
            cursor.execute(f"PRAGMA journal_mode = {'WAL' if journal == 'wal' else 'DELETE'}")
        if journal == "wal":
            connection_created.connect(_wal_normal)
        connections.close_all()
        try:
            rows += [{"journal": journal, **row} for row in asyncio.run(_measure(calls, rounds, concurrency))]
        finally:
            connection_created.disconnect(_wal_normal)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=CALLS)
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    options = parser.parse_args()
    rows = measure(options.calls, options.rounds)
    print(f"tools/call in process, SQLite file, median of {options.rounds} interleaved rounds of {options.calls} calls")
    print(
        f"  {'journal':7} {'workload':28} {'callers':>7} {'calls/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'rows/commit':>11}"
    )
    for row in rows:
        print(
            f"  {row['journal']:7} {row['workload']:28} {row['concurrency']:7d} {row['calls_per_s']:9.0f}"
            f" {row['p50_ms']:8.2f}"
            f" {row['p99_ms']:8.2f} {row['rows_per_commit']:11.1f}"
        )


if __name__ == "__main__":
    main()
