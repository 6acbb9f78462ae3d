"""What the idempotency hook and the output cap cost a `tools/call` that uses neither, in process (issue 40).

Every endpoint runs `IdempotencyHook` innermost (a call without an `Idempotency-Key` passes through it)
and every tool result goes through `output_caps.capped` (which measures the result only when a cap is
set). This runs `MessageHandler.handle()` on a 2026-07-28 async echo four ways: both as they ship;
without the hook (an endpoint whose `hooks()` leaves it out); without the cap check (`capped` replaced
by the identity); with a cap of 100,000 characters on the endpoint (`tool_output_max_chars`: the result
is measured on every call). CPU µs per call, the median of interleaved rounds, and each one's difference
from "as shipped".

    .venv/bin/python benchmarks/bench_safety.py [--calls N] [--rounds N]

A benchmark, not a test: nothing asserts on the numbers.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from django.core.management import call_command

from benchmarks import bench_inprocess
from benchmarks.bench_inprocess import MESSAGES, per_call, registry
from mcp_django.endpoints import Endpoint
from mcp_django.protocol import Connection
from mcp_django.safety.idempotency import IdempotencyHook
from mcp_django.sources import composite


class WithoutIdempotency(Endpoint):
    """An endpoint whose hooks leave the idempotency hook out."""

    def hooks(self) -> list[Any]:
        return [hook for hook in super().hooks() if not isinstance(hook, IdempotencyHook)]


def endpoint(kind: type[Endpoint], name: str, **options: Any) -> Endpoint:
    options = {"registry": registry, "allow_anonymous": True, "interceptors": [], "sessions": False, **options}
    return kind(name, name=f"bench-safety-{name}", **options)


async def measure(calls: int, rounds: int) -> None:
    message, version = MESSAGES["call-2026"]
    connection = Connection(sessions=False, version_header=version)
    shipped, bare = endpoint(Endpoint, "shipped"), endpoint(WithoutIdempotency, "bare")
    with_cap = endpoint(Endpoint, "capped", tool_output_max_chars=100_000)
    capped = composite.capped

    def uncapped(component: Any, name: str, result: Any, ctx: Any) -> Any:
        return result

    async def as_shipped() -> Any:
        return await shipped.handler.handle(message, connection)

    async def without_hook() -> Any:
        return await bare.handler.handle(message, connection)

    async def without_cap() -> Any:
        composite.capped = uncapped
        try:
            return await shipped.handler.handle(message, connection)
        finally:
            composite.capped = capped

    async def with_a_cap() -> Any:
        return await with_cap.handler.handle(message, connection)

    workloads = {
        "as shipped (hook, cap check, no cap set)": as_shipped,
        "without the idempotency hook": without_hook,
        "without the output-cap check": without_cap,
        "with a cap set (the endpoint's, 100,000 chars)": with_a_cap,
    }
    for call in workloads.values():
        await per_call(call, 200)
    samples: dict[str, list[float]] = {key: [] for key in workloads}
    for _ in range(rounds):
        for key, call in workloads.items():
            samples[key].append(await per_call(call, calls))
    base = statistics.median(samples["as shipped (hook, cap check, no cap set)"])
    print(f"tools/call 2026-07-28, async echo, handle(): CPU µs per call, median of {rounds} interleaved rounds")
    for key, values in samples.items():
        median = statistics.median(values)
        print(f"  {key:44} {median:7.1f}   ({min(values):.1f}-{max(values):.1f})   {median - base:+6.1f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=7)
    options = parser.parse_args()
    bench_inprocess.clock = time.process_time
    call_command("migrate", verbosity=0)
    asyncio.run(measure(options.calls, options.rounds))


if __name__ == "__main__":
    main()
