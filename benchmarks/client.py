"""A small HTTP/1.1 client on asyncio streams: the harness's requests, and the load driver when wrk is missing.

Raw sockets rather than an HTTP library, so the driver spends as little of the machine's two cores as it
can (it shares them with the server it measures). It speaks just enough HTTP/1.1: keep-alive, bodies by
`Content-Length` or chunked.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Response:
    status: int
    headers: Mapping[str, str]
    body: bytes


@dataclass
class LoadResult:
    """What one round of load produced: completed calls, the wall time, each call's latency in seconds."""

    requests: int
    seconds: float
    latencies: list[float] = field(default_factory=list)
    failures: int = 0


def split_id(body: bytes) -> tuple[bytes, bytes]:
    """Split a request body around its id (`workloads.message` writes `"id":1`), so each call can have its own."""
    head, marker, tail = body.partition(b'"id":1,')
    if not marker:
        raise ValueError(f"no id in {body[:80]!r}")
    return head + b'"id":', b"," + tail


def with_id(parts: tuple[bytes, bytes], number: int) -> bytes:
    return parts[0] + str(number).encode() + parts[1]


def encode(path: str, port: int, body: bytes, headers: Mapping[str, str]) -> bytes:
    lines = [f"POST {path} HTTP/1.1", f"Host: 127.0.0.1:{port}", f"Content-Length: {len(body)}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


async def read_response(reader: asyncio.StreamReader) -> Response:
    head = await reader.readuntil(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    headers: dict[str, str] = {}
    for line in header_lines:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    if "content-length" in headers:
        body = await reader.readexactly(int(headers["content-length"]))
    elif headers.get("transfer-encoding", "").lower() == "chunked":
        chunks = []
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            chunks.append(await reader.readexactly(size + 2))
            if size == 0:
                break
        body = b"".join(chunk[:-2] for chunk in chunks)
    else:
        body = await reader.read()
    return Response(int(status_line.split()[1]), headers, body)


async def request(port: int, path: str, body: bytes, headers: Mapping[str, str]) -> Response:
    """POST one request on a connection of its own (an answer must come within 30 s)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(encode(path, port, body, {**headers, "Connection": "close"}))
        return await asyncio.wait_for(read_response(reader), 30)
    finally:
        writer.close()


async def load(
    port: int, path: str, bodies: Sequence[bytes], headers: Mapping[str, str], connections: int, seconds: float
) -> LoadResult:
    """Keep `connections` keep-alive connections busy for `seconds`, cycling through `bodies`.

    Each call carries a JSON-RPC id of its own (see `split_id`).
    """
    parts = [split_id(body) for body in bodies]
    result = LoadResult(0, 0.0)
    deadline = time.perf_counter() + seconds

    async def connection(offset: int) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        number = offset * 1_000_000_000
        try:
            while time.perf_counter() < deadline:
                started = time.perf_counter()
                number += 1
                writer.write(encode(path, port, with_id(parts[number % len(parts)], number), headers))
                response = await read_response(reader)
                result.latencies.append(time.perf_counter() - started)
                result.requests += 1
                if response.status != 200:
                    result.failures += 1
                if response.headers.get("connection", "").lower() == "close":
                    writer.close()
                    reader, writer = await asyncio.open_connection("127.0.0.1", port)
        finally:
            writer.close()

    started = time.perf_counter()
    await asyncio.gather(*(connection(offset) for offset in range(1, connections + 1)))
    result.seconds = time.perf_counter() - started
    return result


async def many(
    port: int, path: str, calls: Sequence[tuple[bytes, Mapping[str, str]]], connections: int
) -> list[Response]:
    """POST each (body, headers) once over `connections` keep-alive connections; the responses in call order."""
    pending = list(enumerate(calls))
    responses: list[Response | None] = [None] * len(calls)

    async def connection() -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            while pending:
                index, (body, headers) = pending.pop()
                writer.write(encode(path, port, body, headers))
                responses[index] = response = await read_response(reader)
                if response.headers.get("connection", "").lower() == "close":
                    writer.close()
                    reader, writer = await asyncio.open_connection("127.0.0.1", port)
        finally:
            writer.close()

    await asyncio.gather(*(connection() for _ in range(connections)))
    return [response for response in responses if response is not None]
