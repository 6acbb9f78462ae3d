"""What telemetry costs: `tools/call` through the in-memory client, without the extension, with it on the
OpenTelemetry API alone (no SDK configured: what an installed-but-unconfigured `otel` extra costs), and
with an SDK that samples every span into a batch processor whose exporter drops them; for an async tool
and for a sync one (which runs on the database threads, in a copy of the call's context).

Run it with ``.venv/bin/python benchmarks/bench_telemetry.py``; it prints the median CPU time
(`time.process_time`, every thread's) per call of each configuration and the median of each round's
ratio (rounds interleaved, the order swapped every round, so drift and order hit both alike). With
``--calls`` it counts instead the Python functions each call runs, in every thread, with the extension
on the API alone and without: exact where CPU time is noisy. A benchmark, not a test: nothing asserts
on the numbers (docs/observability.md quotes a run).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.bench_settings")  # no audit sink

import django

django.setup()

from mcp_django import Registry  # noqa: E402
from mcp_django.endpoints import Endpoint  # noqa: E402
from mcp_django.telemetry import TelemetryExtension  # noqa: E402
from mcp_django.testing import MCPTestClient  # noqa: E402

CALLS = 2000
ROUNDS = 15
COUNTED = 400
TOOLS = ("add", "add_sync")

registry = Registry("benchmark")


@registry.tool
async def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@registry.tool
def add_sync(a: int, b: int) -> int:
    """Add two numbers, from a sync function (it runs on a database thread)."""
    return a + b


def client(traced: bool) -> MCPTestClient:
    endpoint = Endpoint(
        "bench/mcp",
        name="bench",
        mode="server",
        registry=registry,
        allow_anonymous=True,
        extensions=[TelemetryExtension()] if traced else [],
        interceptors=[],
    )
    return MCPTestClient(endpoint, era="stateless")


async def per_call(target: MCPTestClient, tool: str, calls: int = CALLS) -> float:
    started = time.process_time()
    for _ in range(calls):
        await target.call_tool(tool, {"a": 1, "b": 2})
    return (time.process_time() - started) / calls * 1e6


async def compare(label: str, plain: MCPTestClient, traced: MCPTestClient, tool: str) -> None:
    await per_call(plain, tool)
    await per_call(traced, tool)
    samples: dict[str, list[float]] = {"plain": [], "traced": []}
    ratios: list[float] = []
    for round_ in range(ROUNDS):
        order = ("plain", "traced") if round_ % 2 == 0 else ("traced", "plain")
        measured = {name: await per_call(plain if name == "plain" else traced, tool) for name in order}
        for name, value in measured.items():
            samples[name].append(value)
        ratios.append(measured["traced"] / measured["plain"])
    none, on, ratio = (statistics.median(values) for values in (samples["plain"], samples["traced"], ratios))
    print(f"  {tool:9} no telemetry:          {none:8.1f} us CPU/call")
    print(f"  {tool:9} {label:22} {on:8.1f} us CPU/call  (median ratio {ratio:.3f}, {(ratio - 1) * 100:+.1f} %)")


async def count_calls() -> None:
    """Print how many Python functions one call runs, in every thread, with and without the extension (API only)."""
    counted: Counter[tuple[bool, str]] = Counter()
    key: list[tuple[bool, str] | None] = [None]

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call" and key[0] is not None:
            counted[key[0]] += 1

    # Set before the first call, so the database threads (started by it) are counted too.
    threading.setprofile(profile)
    sys.setprofile(profile)
    clients = {traced: client(traced) for traced in (False, True)}
    for tool in TOOLS:
        for traced, target in clients.items():
            await per_call(target, tool, 50)  # warm: imports, caches
            key[0] = (traced, tool)
            await per_call(target, tool, COUNTED)
            key[0] = None
    sys.setprofile(None)
    for tool in TOOLS:
        none, on = counted[(False, tool)] / COUNTED, counted[(True, tool)] / COUNTED
        print(f"  {tool:9} Python calls per call: {none:7.2f} without, {on:7.2f} with the API only ({on - none:+.2f})")


async def main() -> None:
    if "--calls" in sys.argv:
        print(f"tools/call through MCPTestClient, 2026-07-28, {COUNTED} calls each")
        await count_calls()
        return
    print(f"tools/call through MCPTestClient, 2026-07-28, median of {ROUNDS} rounds of {CALLS} calls")
    plain, traced = client(False), client(True)
    for tool in TOOLS:
        await compare("API only, no SDK:", plain, traced, tool)

    from benchmarks.otel import install_dropping_sdk

    provider = install_dropping_sdk()
    for tool in TOOLS:
        await compare("SDK, batch, dropped:", plain, traced, tool)
    provider.shutdown()


if __name__ == "__main__":
    asyncio.run(main())
