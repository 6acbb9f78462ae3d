"""Driving an ASGI application in process for the fuzz tests: one request, its whole answer, bounded in time."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tests.fuzz.strategies import check_reply, is_request

WAIT_S = 10.0
STREAM_S = 1.0
"""How long a streamed answer is read before the client goes away (a GET stream never ends by itself)."""


@dataclass
class Answer:
    status: int = 0
    headers: dict[bytes, bytes] = field(default_factory=dict)
    chunks: list[bytes] = field(default_factory=list)

    @property
    def body(self) -> bytes:
        return b"".join(self.chunks)


async def serve(app: Any, method: str, path: str, headers: Sequence[tuple[bytes, bytes]], body: bytes) -> Answer:
    """Send one request to `app`; read the answer until it ends (or, for a stream, STREAM_S), then disconnect."""
    answer = Answer()
    inbox = [{"type": "http.request", "body": body, "more_body": False}]
    gone = asyncio.Event()

    async def receive() -> dict[str, Any]:
        if inbox:
            return inbox.pop()
        await gone.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            assert not answer.status, "two response starts"
            answer.status = message["status"]
            answer.headers = {name.lower(): value for name, value in message.get("headers", [])}
        elif message["type"] == "http.response.body":
            assert answer.status, "a body before the response start"
            answer.chunks.append(message.get("body", b""))

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": list(headers),
        "client": ("127.0.0.1", 50000),
        "server": ("localhost", 80),
    }
    task = asyncio.ensure_future(app(scope, receive, send))
    async with asyncio.timeout(WAIT_S):
        # The client stays until the answer has started (a busy machine may take seconds), then reads a
        # stream for STREAM_S at most: leaving earlier would be a disconnect, which is answered by nothing.
        done, _ = await asyncio.wait([task], timeout=STREAM_S)
        while not done and not answer.status:
            done, _ = await asyncio.wait([task], timeout=0.05)
    if not done:
        gone.set()
        await asyncio.wait_for(task, WAIT_S)
    task.result()  # an unhandled exception fails the case
    return answer


def check_answer(answer: Answer, message: Any, *, strict_id: bool, django_pages: bool = False) -> None:
    """Fail unless the answer is no 5xx but 503, and every JSON-RPC reply in it is valid (with the request's id
    when `strict_id`; else the id is the request's or null).

    `django_pages`: the request went through Django's middleware, whose own refusals (an invalid Host:
    `CommonMiddleware`'s HTML 400) come before the endpoint sees the request.
    """
    assert answer.status, "no answer"
    assert answer.status < 500 or answer.status == 503, (answer.status, answer.body[:300])
    content_type = answer.headers.get(b"content-type", b"").split(b";")[0].strip()
    if content_type == b"application/json":
        replies = [json.loads(answer.body)]
    elif content_type == b"text/event-stream":
        replies = [
            json.loads(line[len(b"data:") :])
            for line in answer.body.splitlines()
            if line.startswith(b"data:") and line[len(b"data:") :].strip()
        ]
        replies = [reply for reply in replies if not (isinstance(reply, dict) and "method" in reply)]
    else:
        django_page = django_pages and content_type == b"text/html" and answer.status == 400
        assert not answer.body or answer.status < 300 or answer.status == 405 or django_page, (
            answer.status,
            answer.body[:300],
        )
        return
    for reply in replies:
        if strict_id:
            check_reply(reply, message)
        else:
            check_reply(reply, None)
            if isinstance(reply, dict) and reply.get("id") is not None:
                assert is_request(message), (message, reply)
                assert reply["id"] == message["id"], (message, reply)
