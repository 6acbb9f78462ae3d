"""How a sync job is handed to a thread and back, three ways: CPU time per job, 1 and 16 concurrent callers.

- `run_in_executor`: a `ThreadPoolExecutor` through `loop.run_in_executor`, what `run_sync` did before;
- `run_sync`: `mcp_django.runtime.executor` as it is (one queue, one `call_soon_threadsafe` per job);
- `batch per wake-up`: a prototype whose threads hand every result finished since the loop's last
  wake-up back with one `call_soon_threadsafe`.

The job returns at once and each way runs it as `run_sync` does (`_Job.run_on_pool`: the running count,
`close_old_connections` before and after), so what differs is the hand-off. Each has 4 threads.

    .venv/bin/python benchmarks/bench_executor.py

A benchmark, not a test: nothing asserts on the numbers.
"""

from __future__ import annotations

import asyncio
import collections
import contextvars
import os
import queue
import statistics
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.bench_settings")

import django

django.setup()

from django.test import override_settings  # noqa: E402

from mcp_django.runtime.executor import _Job, dedicated_threads, run_sync  # noqa: E402

THREADS = 4
JOBS = 8000
ROUNDS = 5


def job() -> int:
    return 1


def pooled_job() -> int:
    """`job` as a pool thread of `run_sync` runs it."""
    return _Job(job, (), {}).run_on_pool()


class Batching:
    """The prototype: results go to a deque; the first one since the loop's last drain schedules the drain."""

    def __init__(self, size: int) -> None:
        self.jobs: queue.SimpleQueue[tuple[Any, ...]] = queue.SimpleQueue()
        self.finished: collections.deque[tuple[asyncio.Future[Any], Any]] = collections.deque()
        self.lock = threading.Lock()
        self.scheduled = False
        for _ in range(size):
            threading.Thread(target=self.work, daemon=True).start()

    def work(self) -> None:
        while True:
            loop, future, context, fn = self.jobs.get()
            value = context.run(fn)
            with self.lock:
                self.finished.append((future, value))
                if self.scheduled:
                    continue
                self.scheduled = True
            loop.call_soon_threadsafe(self.drain)

    def drain(self) -> None:
        with self.lock:
            done, self.scheduled = list(self.finished), False
            self.finished.clear()
        for future, value in done:
            if not future.done():
                future.set_result(value)


def callers() -> dict[str, Callable[[], Awaitable[Any]]]:
    pool = ThreadPoolExecutor(THREADS)
    batching = Batching(THREADS)

    async def in_executor() -> Any:
        return await asyncio.get_running_loop().run_in_executor(pool, contextvars.copy_context().run, pooled_job)

    async def pooled() -> Any:
        return await run_sync(job)

    async def batched() -> Any:
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        batching.jobs.put((loop, future, contextvars.copy_context(), pooled_job))
        return await future

    return {"run_in_executor": in_executor, "run_sync": pooled, "batch per wake-up": batched}


async def per_job(call: Callable[[], Awaitable[Any]], concurrency: int) -> float:
    async def caller(count: int) -> None:
        for _ in range(count):
            await call()

    started = time.process_time()
    await asyncio.gather(*(caller(JOBS // concurrency) for _ in range(concurrency)))
    return (time.process_time() - started) / JOBS * 1e6


async def main() -> None:
    table = callers()
    with dedicated_threads():
        for call in table.values():
            await per_job(call, 16)  # warm up: threads started
        for concurrency in (1, 16):
            samples: dict[str, list[float]] = {name: [] for name in table}
            for _ in range(ROUNDS):
                for name, call in table.items():
                    samples[name].append(await per_job(call, concurrency))
            print(f"{concurrency} caller(s): CPU µs per job, median of {ROUNDS} interleaved rounds of {JOBS}")
            for name, values in samples.items():
                print(f"  {name:20} {statistics.median(values):7.1f}")


if __name__ == "__main__":
    with override_settings(MCP_DJANGO={"DATABASE_THREADS": THREADS}):
        asyncio.run(main())
