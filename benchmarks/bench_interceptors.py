"""What the interceptor chain costs: `tools/call` with ten no-op interceptors against none, side by side.

Run it with ``.venv/bin/python benchmarks/bench_interceptors.py``; it prints the median time per call
of each configuration and the overhead. A benchmark, not a test: nothing asserts on the numbers.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "example_project.settings")

import django

django.setup()

from benchmarks.tools import TEN_NO_OPS  # noqa: E402
from mcp_django import Registry  # noqa: E402
from mcp_django.interceptors import handler_options  # noqa: E402
from mcp_django.protocol import Connection, MessageHandler  # noqa: E402

CALLS = 3000
ROUNDS = 7

registry = Registry("benchmark")


@registry.tool
async def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


TEN = TEN_NO_OPS


def handler(interceptors: list[Any]) -> MessageHandler:
    options = handler_options(interceptors)
    hook = options.pop("hook", None)
    return MessageHandler(
        registry.backend(), server_info={"name": "bench", "version": "0"}, hooks=[hook] if hook else [], **options
    )


async def per_call(target: MessageHandler) -> float:
    connection = Connection(sessions=False)
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "add", "arguments": {"a": 1, "b": 2}},
    }
    started = time.perf_counter()
    for _ in range(CALLS):
        await target.handle(message, connection)
    return (time.perf_counter() - started) / CALLS * 1e6


async def main() -> None:
    bare, chained = handler([]), handler(TEN)
    await per_call(bare)
    await per_call(chained)
    samples: dict[str, list[float]] = {"none": [], "ten no-ops": []}
    for _ in range(ROUNDS):  # interleaved, so drift hits both alike
        samples["none"].append(await per_call(bare))
        samples["ten no-ops"].append(await per_call(chained))
    none, ten = statistics.median(samples["none"]), statistics.median(samples["ten no-ops"])
    print(f"tools/call, median of {ROUNDS} rounds of {CALLS} calls")
    print(f"  no interceptors:      {none:8.1f} us/call")
    print(f"  ten no-op (4V 3M 3S): {ten:8.1f} us/call")
    print(f"  overhead:             {(ten / none - 1) * 100:8.1f} %")


if __name__ == "__main__":
    asyncio.run(main())
