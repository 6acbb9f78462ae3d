"""The cheap parts of a call, in process: µs per call of the core and of the HTTP rules, no server, no socket.

Workloads (anonymous, an async echo tool): `tools/call` in the handshake era (no session) and in 2026-07-28,
and `tools/list`, each through `MessageHandler.handle()` (`handle:` rows) and through
`StreamableHTTP.respond()` with the body as bytes (`respond:` rows: admission, header checks, JSON
parsing and encoding on top), and through the ASGI fast path's application called directly
(`asgi:` rows: the scope's headers, the route, the disconnect watch, the body read, the response
messages on top; `bare asgi` is an application answering a fixed body, the floor); then
`tools/call` of a sync echo tool (a thread hop), and with ten
no-op interceptors against none.

    .venv/bin/python benchmarks/bench_inprocess.py            # the table (median of interleaved rounds)
    .venv/bin/python benchmarks/bench_inprocess.py --cpu      # CPU time per call instead of wall time
    .venv/bin/python benchmarks/bench_inprocess.py --profile handle:call-2026   # cProfile one workload
    .venv/bin/python benchmarks/bench_inprocess.py --once respond:call-2026     # N calls, for callgrind

A benchmark, not a test: nothing asserts on the numbers.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.bench_settings")
os.environ.setdefault("BENCH_DB", str(Path(tempfile.mkdtemp(prefix="mcp-bench-")) / "db.sqlite3"))

import django

django.setup()

from django.core.management import call_command  # noqa: E402

from benchmarks.bench_interceptors import TEN  # noqa: E402
from mcp_django import Registry  # noqa: E402
from mcp_django.asgi import FastPath  # noqa: E402
from mcp_django.endpoints import Endpoint  # noqa: E402
from mcp_django.endpoints.admission import Credentials  # noqa: E402
from mcp_django.protocol import Connection  # noqa: E402
from mcp_django.runtime.executor import dedicated_threads  # noqa: E402
from mcp_django.transports.http import StreamableHTTP  # noqa: E402

CALLS = 2000
ROUNDS = 5

registry = Registry("bench-inprocess")


@registry.tool
async def echo(text: str) -> str:
    """Echo the text back."""
    return text


@registry.tool
def echo_sync(text: str) -> str:
    """Echo the text back, from a sync function (run on a thread)."""
    return text


@registry.tool
def count_users(text: str) -> str:
    """One ORM read: `count()` of a small table."""
    from django.contrib.auth import get_user_model

    return f"{text} {get_user_model().objects.count()}"


META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
CALL = {"name": "echo", "arguments": {"text": "hello"}}
MESSAGES: dict[str, tuple[dict[str, Any], str]] = {
    "call-handshake": ({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": CALL}, "2025-11-25"),
    "call-2026": ({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {**CALL, "_meta": META}}, "2026-07-28"),
    "list-2026": ({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}}, "2026-07-28"),
}


def _headers(message: dict[str, Any], version: str) -> dict[str, str]:
    headers = {
        "accept": "application/json, text/event-stream",
        "content-type": "application/json",
        "mcp-protocol-version": version,
        "host": "localhost",
    }
    if version == "2026-07-28":
        headers["mcp-method"] = message["method"]
        if "name" in message["params"]:
            headers["mcp-name"] = message["params"]["name"]
    return headers


def workloads() -> dict[str, Callable[[], Awaitable[Any]]]:
    bare = Endpoint(
        "bare", name="bench-inprocess-bare", registry=registry, allow_anonymous=True, interceptors=[], sessions=False
    )
    ten = Endpoint("ten", name="bench-inprocess-ten", registry=registry, allow_anonymous=True, interceptors=TEN)
    table: dict[str, Callable[[], Awaitable[Any]]] = {}
    for key, (message, version) in MESSAGES.items():
        connection = bare.connection(None, transport="http", sessions=False, version_header=version)
        table[f"handle:{key}"] = _bind(bare.handler.handle, message, connection)
        headers, body = _headers(message, version), json.dumps(message).encode()
        transport = StreamableHTTP(bare)
        table[f"respond:{key}"] = _respond(transport, headers, body)
    message, version = MESSAGES["call-2026"]
    connection = Connection(sessions=False, version_header=version)
    table["handle:call-2026 bare handler"] = _bind(bare.handler.handle, message, connection)
    sync = {**message, "params": {**message["params"], "name": "echo_sync"}}
    table["handle:call-2026 sync tool"] = _bind(bare.handler.handle, sync, connection)
    orm = {**message, "params": {**message["params"], "name": "count_users"}}
    table["handle:call-2026 sync ORM count()"] = _bind(bare.handler.handle, orm, connection)
    # As the ASGI fast path runs them: on the executor's long-lived database threads.
    table["handle:call-2026 sync tool, db threads"] = _bind(bare.handler.handle, sync, connection, dedicated=True)
    table["handle:call-2026 sync ORM, db threads"] = _bind(bare.handler.handle, orm, connection, dedicated=True)
    table["handle:call-2026 ten no-ops"] = _bind(ten.handler.handle, message, connection)
    # The URLconf's endpoint (benchmarks/bench_urls.py) on the fast path, and the floor beside it.
    add = {**message, "params": {"name": "add", "arguments": {"a": 1, "b": 2}, "_meta": META}}
    headers = {**_headers(add, version), "mcp-name": "add"}
    table["asgi:call-2026"] = _asgi(FastPath(_bare_asgi), "/bare/mcp", headers, json.dumps(add).encode())
    table["asgi:bare asgi"] = _asgi(_bare_asgi, "/bare/mcp", headers, json.dumps(add).encode())
    return table


async def _bare_asgi(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """A fixed JSON body, as `benchmarks/bare.py` answers: the floor of the `asgi:` rows."""
    await receive()
    body = b'{"jsonrpc":"2.0","id":1,"result":{}}'
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _asgi(app: Callable[..., Awaitable[None]], path: str, headers: dict[str, str], body: bytes) -> Any:
    raw_headers = [
        (name.encode(), value.encode()) for name, value in {**headers, "content-length": str(len(body))}.items()
    ]
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
        "path": path, "raw_path": path.encode(), "root_path": "", "query_string": b"", "headers": raw_headers,
        "client": ("127.0.0.1", 40000), "server": ("127.0.0.1", 8000),
    }  # fmt: skip

    async def call() -> Any:
        sent: list[dict[str, Any]] = []
        pending = [{"type": "http.request", "body": body, "more_body": False}]

        async def receive() -> dict[str, Any]:
            if pending:
                return pending.pop()
            return await asyncio.get_running_loop().create_future()  # the client stays: never disconnects

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        await app(dict(scope), receive, send)
        assert sent[0]["status"] == 200, sent
        assert b'"result"' in sent[1]["body"], sent
        return sent

    return call


def _bind(
    handle: Callable[..., Awaitable[Any]], message: dict[str, Any], connection: Connection, dedicated: bool = False
) -> Any:
    async def call() -> Any:
        with dedicated_threads(dedicated):
            reply = await handle(message, connection)
        assert "result" in reply, reply
        assert not reply["result"].get("isError"), reply
        return reply

    return call


def _respond(transport: StreamableHTTP, headers: dict[str, str], body: bytes) -> Any:
    credentials = Credentials(headers)

    async def call() -> Any:
        response = await transport.respond("POST", headers, body, credentials=credentials, host="localhost")
        assert response.status == 200, response
        assert b'"result"' in response.body, response
        return response

    return call


clock: Callable[[], float] = time.perf_counter


async def per_call(call: Callable[[], Awaitable[Any]], calls: int) -> float:
    started = clock()
    for _ in range(calls):
        await call()
    return (clock() - started) / calls * 1e6


async def table(selected: list[str] | None, calls: int, rounds: int) -> None:
    chosen = {key: call for key, call in workloads().items() if not selected or key in selected}
    for call in chosen.values():
        await per_call(call, 200)  # warm up: handlers, caches, validators
    samples: dict[str, list[float]] = {key: [] for key in chosen}
    for _ in range(rounds):  # interleaved, so drift hits every workload alike
        for key, call in chosen.items():
            samples[key].append(await per_call(call, calls))
    what = "CPU µs (process time: every thread)" if clock is time.process_time else "µs"
    print(f"median of {rounds} interleaved rounds of {calls} calls, {what} per call (min-max of the rounds)")
    for key, values in samples.items():
        print(f"  {key:34} {statistics.median(values):8.1f}   ({min(values):.1f}-{max(values):.1f})")


async def once(key: str, calls: int, profile: bool) -> None:
    call = workloads()[key]
    await per_call(call, 200)
    if not profile:
        await per_call(call, calls)
        return
    import cProfile
    import pstats

    profiler = cProfile.Profile()
    profiler.enable()
    await per_call(call, calls)
    profiler.disable()
    pstats.Stats(profiler).sort_stats("tottime").print_stats(35)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--profile", metavar="WORKLOAD")
    parser.add_argument("--once", metavar="WORKLOAD")
    parser.add_argument("--calls", type=int, default=CALLS)
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--cpu", action="store_true", help="CPU time per call (time.process_time), not wall time")
    parser.add_argument("workloads", nargs="*")
    options = parser.parse_args()
    global clock
    if options.cpu:
        clock = time.process_time
    call_command("migrate", verbosity=0)
    if options.profile or options.once:
        asyncio.run(once(options.profile or options.once, options.calls, bool(options.profile)))
    else:
        asyncio.run(table(options.workloads, options.calls, options.rounds))


if __name__ == "__main__":
    main()
