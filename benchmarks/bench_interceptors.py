"""What the interceptor chain costs: `tools/call` with ten no-op interceptors against none, side by side.

Run it with ``.venv/bin/python benchmarks/bench_interceptors.py``; it prints the median CPU time per call
(`time.process_time`: a busy machine slows calls down but hardly makes each cost more CPU) over interleaved
rounds, for no interceptors, the ten of `TEN_NO_OPS` (4 validations, 3 mutations, 3 sinks) and ten of
each kind, and each one's cost over none (the median of each round's ratio, so drift between rounds
cancels out). A benchmark, not a test: nothing asserts on the numbers.
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

from benchmarks.tools import TEN_NO_OPS, NoOpMutation, NoOpSink, NoOpValidation  # noqa: E402
from mcp_django import Registry  # noqa: E402
from mcp_django.interceptors import handler_options  # noqa: E402
from mcp_django.protocol import Connection, MessageHandler  # noqa: E402

CALLS = 2000
ROUNDS = 9

registry = Registry("benchmark")


@registry.tool
async def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


TEN = TEN_NO_OPS
CONFIGURATIONS: dict[str, list[Any]] = {
    "no interceptors": [],
    "ten no-ops (4V 3M 3S)": TEN,
    **{
        f"ten no-op {label}": [{"CLASS": kind, "NAME": f"{kind.__name__}-{i}"} for i in range(10)]
        for label, kind in (("validations", NoOpValidation), ("mutations", NoOpMutation), ("sinks", NoOpSink))
    },
}


def handler(interceptors: list[Any]) -> MessageHandler:
    options = handler_options(interceptors)
    hook = options.pop("hook", None)
    return MessageHandler(
        registry.backend(), server_info={"name": "bench", "version": "0"}, hooks=[hook] if hook else [], **options
    )


async def per_call(target: MessageHandler, calls: int = CALLS) -> float:
    connection = Connection(sessions=False)
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "add", "arguments": {"a": 1, "b": 2}},
    }
    started = time.process_time()
    for _ in range(calls):
        await target.handle(message, connection)
    return (time.process_time() - started) / calls * 1e6


async def main() -> None:
    handlers = {name: handler(config) for name, config in CONFIGURATIONS.items()}
    for target in handlers.values():
        await per_call(target, 200)
    samples: dict[str, list[float]] = {name: [] for name in handlers}
    for _ in range(ROUNDS):  # interleaved, so drift hits every configuration alike
        for name, target in handlers.items():
            samples[name].append(await per_call(target))
    none = samples["no interceptors"]
    print(f"tools/call, CPU µs per call: median of {ROUNDS} interleaved rounds of {CALLS} calls (min-max)")
    for name, values in samples.items():
        cost = statistics.median(value / base - 1 for value, base in zip(values, none, strict=True)) * 100
        spread = f"({min(values):.1f}-{max(values):.1f})"
        print(f"  {name:24} {statistics.median(values):7.1f} {spread:>15}   {cost:+6.1f}% over none")


if __name__ == "__main__":
    asyncio.run(main())
