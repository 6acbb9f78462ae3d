"""One round of load on one row: wrk with a Lua script when it is installed, the built-in driver otherwise."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import statistics
import subprocess
import time
from dataclasses import dataclass, replace
from pathlib import Path

from benchmarks import client
from benchmarks.client import split_id
from benchmarks.cpu import Reading, Spent
from benchmarks.workloads import Prepared

WRK_REPORT = """
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'BENCH {"requests": %d, "duration_us": %d, "p50_us": %d, "p99_us": %d, "failures": %d}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    e.connect + e.read + e.write + e.status + e.timeout))
end
"""


@dataclass(frozen=True)
class Sample:
    """One row's round: calls per second, median and 99th percentile latency (ms), failed calls.

    With the CPU time the round took (`measure` fills them in): the server's per call, in µs, and the
    shares of the machine (every core for the round's wall time) the load generator and all other
    processes took meanwhile.
    """

    calls_per_second: float
    p50_ms: float
    p99_ms: float
    failures: int
    requests: int = 0
    server_us_per_call: float = 0.0
    generator_share: float = 0.0
    others_share: float = 0.0


def wrk_available() -> bool:
    return shutil.which("wrk") is not None


def lua_string(value: bytes | str) -> str:
    text = value.decode() if isinstance(value, bytes) else value
    level = "=" * 4
    assert f"]{level}]" not in text
    return f"[{level}[{text}]{level}]"


def wrk_script(prepared: Prepared) -> str:
    """A wrk Lua script POSTing the workload's bodies (cycled through) with its headers.

    Every request gets a JSON-RPC id of its own (10^9 times the thread's number, plus a counter): requests in flight
    at once on one session must not share an id, or a server may route one's answer to the other.
    """
    lines = ['wrk.method = "POST"']
    lines += [f"wrk.headers[ {lua_string(name)} ] = {lua_string(value)}" for name, value in prepared.headers.items()]
    parts = [split_id(body) for body in prepared.bodies]
    lines.append("local heads = {" + ", ".join(lua_string(head) for head, _ in parts) + "}")
    lines.append("local tails = {" + ", ".join(lua_string(tail) for _, tail in parts) + "}")
    lines += [
        "local threads, index, counter = 0, 0, 0",
        "setup = function(thread)",
        "  threads = threads + 1",
        '  thread:set("base", threads * 1000000000)',
        "end",
        "request = function()",
        "  index = index % #heads + 1",
        "  counter = counter + 1",
        '  return wrk.format(nil, nil, nil, heads[index] .. string.format("%d", base + counter) .. tails[index])',
        "end",
    ]
    return "\n".join(lines) + "\n" + WRK_REPORT


def run_wrk(port: int, path: str, prepared: Prepared, seconds: float, connections: int, folder: Path) -> Sample:
    script = folder / f"wrk-{port}-{abs(hash((path, prepared.bodies[0], tuple(prepared.headers.items()))))}.lua"
    script.write_text(wrk_script(prepared))
    argv = [
        "wrk",
        f"-t{min(2, connections)}",
        f"-c{connections}",
        f"-d{max(1, round(seconds))}s",
        "--timeout",
        "10s",
        "-s",
        str(script),
    ]
    done = subprocess.run(
        [*argv, f"http://127.0.0.1:{port}{path}"], capture_output=True, text=True, timeout=seconds + 60
    )
    line = next((line for line in done.stdout.splitlines() if line.startswith("BENCH ")), None)
    if line is None:
        raise RuntimeError(f"wrk gave no report: {done.stdout[-500:]} {done.stderr[-500:]}")
    report = json.loads(line.removeprefix("BENCH "))
    return Sample(
        report["requests"] / (report["duration_us"] / 1e6),
        report["p50_us"] / 1000,
        report["p99_us"] / 1000,
        report["failures"],
        report["requests"],
    )


def run_driver(port: int, path: str, prepared: Prepared, seconds: float, connections: int) -> Sample:
    result = asyncio.run(client.load(port, path, prepared.bodies, prepared.headers, connections, seconds))
    latencies = sorted(result.latencies) or [0.0]
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
    return Sample(
        result.requests / result.seconds,
        statistics.median(latencies) * 1000,
        p99 * 1000,
        result.failures,
        result.requests,
    )


def measure(
    port: int,
    path: str,
    prepared: Prepared,
    seconds: float,
    connections: int,
    folder: Path,
    use_wrk: bool,
    group: int | None = None,
) -> Sample:
    """Load `path` for `seconds` with `connections` connections and return what it served.

    With `group` (the server's process group), the sample carries the CPU time the server spent per call
    and how much of the machine the load generator and everything else took meanwhile.
    """
    before, started = Reading.now(group or 0), time.monotonic()
    if use_wrk:
        sample = run_wrk(port, path, prepared, seconds, connections, folder)
    else:
        sample = run_driver(port, path, prepared, seconds, connections)
    if group is None or not sample.requests:
        return sample
    spent = Spent.between(before, Reading.now(group))
    capacity = (time.monotonic() - started) * (os.cpu_count() or 1)
    return replace(
        sample,
        server_us_per_call=spent.server / sample.requests * 1e6,
        generator_share=spent.generator / capacity,
        others_share=spent.others / capacity,
    )
