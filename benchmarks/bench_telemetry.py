"""What telemetry costs: `tools/call` through the in-memory client, without the extension, with it on the
OpenTelemetry API alone (no SDK configured: what an installed-but-unconfigured `otel` extra costs), and
with an SDK that samples every span into a batch processor whose exporter drops them.

Run it with ``.venv/bin/python benchmarks/bench_telemetry.py``; it prints the median CPU time
(`time.process_time`) per call of each configuration and the ratios. A benchmark, not a test: nothing
asserts on the numbers (docs/observability.md quotes a run).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

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

registry = Registry("benchmark")


@registry.tool
async def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def client(extensions: Sequence[TelemetryExtension]) -> MCPTestClient:
    endpoint = Endpoint(
        "bench/mcp",
        name="bench",
        mode="server",
        registry=registry,
        allow_anonymous=True,
        extensions=extensions,
        interceptors=[],
    )
    return MCPTestClient(endpoint, era="stateless")


async def per_call(target: MCPTestClient) -> float:
    started = time.process_time()
    for _ in range(CALLS):
        await target.call_tool("add", {"a": 1, "b": 2})
    return (time.process_time() - started) / CALLS * 1e6


async def compare(label: str, plain: MCPTestClient, traced: MCPTestClient) -> tuple[float, float]:
    await per_call(plain)
    await per_call(traced)
    samples: dict[str, list[float]] = {"plain": [], "traced": []}
    for _ in range(ROUNDS):  # interleaved, so drift hits both alike
        samples["plain"].append(await per_call(plain))
        samples["traced"].append(await per_call(traced))
    none, on = statistics.median(samples["plain"]), statistics.median(samples["traced"])
    print(f"  no telemetry:          {none:8.1f} us CPU/call")
    print(f"  {label:22} {on:8.1f} us CPU/call  ({on / none:.3f}x, {(on / none - 1) * 100:+.1f} %)")
    return none, on


async def main() -> None:
    print(f"tools/call (async add) through MCPTestClient, 2026-07-28, median of {ROUNDS} rounds of {CALLS} calls")
    plain, traced = client([]), client([TelemetryExtension()])
    await compare("API only, no SDK:", plain, traced)

    from benchmarks.otel import install_dropping_sdk

    provider = install_dropping_sdk()
    await compare("SDK, batch, dropped:", plain, traced)
    provider.shutdown()


if __name__ == "__main__":
    asyncio.run(main())
