"""The interceptor chain's cost end to end: `tools/call` over HTTP through daphne, ten no-ops against none.

Starts the example project's settings routed to two endpoints (`benchmarks.bench_urls`) under daphne,
then drives both with 16 concurrent connections, interleaving rounds so drift hits both alike. Run it
with ``.venv/bin/python benchmarks/bench_http_interceptors.py``. A benchmark, not a test.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx2

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.conftest import _free_port, _wait_until_serving  # noqa: E402

CONNECTIONS = 16
CALLS_PER_ROUND = 800
ROUNDS = 5
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
BODY = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "add", "arguments": {"a": 1, "b": 2}, "_meta": META},
    }
)
HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "MCP-Protocol-Version": "2026-07-28",
    "Mcp-Method": "tools/call",
    "Mcp-Name": "add",
}


async def round_trip(client: httpx2.AsyncClient, url: str) -> float:
    """Calls per second over one round of `CALLS_PER_ROUND` calls on `CONNECTIONS` connections."""
    remaining = CALLS_PER_ROUND

    async def worker() -> None:
        nonlocal remaining
        while remaining > 0:
            remaining -= 1
            response = await client.post(url, content=BODY, headers=HEADERS)
            assert response.status_code == 200, response.text

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(CONNECTIONS)))
    return CALLS_PER_ROUND / (time.perf_counter() - started)


async def measure(base: str) -> None:
    limits = httpx2.Limits(max_connections=CONNECTIONS, max_keepalive_connections=CONNECTIONS)
    async with httpx2.AsyncClient(limits=limits, timeout=30) as client:
        for path in ("/bare/mcp", "/ten/mcp"):
            await round_trip(client, base + path)  # warm up
        rates: dict[str, list[float]] = {"/bare/mcp": [], "/ten/mcp": []}
        for _ in range(ROUNDS):
            for path in rates:
                rates[path].append(await round_trip(client, base + path))
    bare, ten = statistics.median(rates["/bare/mcp"]), statistics.median(rates["/ten/mcp"])
    print(f"tools/call over HTTP (daphne, {CONNECTIONS} connections), median of {ROUNDS} rounds of {CALLS_PER_ROUND}")
    print(f"  no interceptors:       {bare:8.0f} calls/s  ({1e6 / bare:7.0f} us/call)")
    print(f"  ten no-op interceptors:{ten:8.0f} calls/s  ({1e6 / ten:7.0f} us/call)")
    print(f"  cost of the chain:     {(bare / ten - 1) * 100:8.1f} %")


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "benchmarks.bench_settings",
            "BENCH_DB": str(Path(folder) / "db.sqlite3"),
            "DJANGO_DEBUG": "0",
        }
        subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v0"], cwd=ROOT, env=env, check=True)
        port, log = _free_port(), Path(folder) / "daphne.log"
        with log.open("wb") as out:
            server = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "daphne",
                    "-b",
                    "127.0.0.1",
                    "-p",
                    str(port),
                    "example_project.asgi:application",
                ],
                cwd=ROOT,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        try:
            _wait_until_serving(server, "127.0.0.1", port, log)
            asyncio.run(measure(f"http://127.0.0.1:{port}"))
        finally:
            server.terminate()
            server.wait(timeout=10)


if __name__ == "__main__":
    main()
