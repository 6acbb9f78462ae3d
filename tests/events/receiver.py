"""A webhook receiver on a real socket, for the tests: it records every POST and verifies nothing itself."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import hmac
import json
import queue
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SECRET = "whsec_" + base64.b64encode(b"k" * 32).decode()
OTHER_SECRET = "whsec_" + base64.b64encode(b"o" * 32).decode()


@dataclasses.dataclass
class Received:
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body)


class Receiver:
    """What the callback URL received, in order, and what it should answer next."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.posts: queue.Queue[Received] = queue.Queue()
        self.failures = 0
        """How many deliveries (not verifications) to answer 503 before answering 200."""
        self.echo = True

    def next(self, wait: float = 10) -> Received:
        return self.posts.get(timeout=wait)

    def quiet(self) -> bool:
        return self.posts.empty()


def signed_by(received: Received, secret: str) -> bool:
    """Standard Webhooks: does one of the `v1,` signatures match HMAC-SHA256(id.timestamp.body) under `secret`?"""
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{received.headers['webhook-id']}.{received.headers['webhook-timestamp']}.".encode() + received.body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    offered = [part.partition(",")[2] for part in received.headers["webhook-signature"].split(" ")]
    return any(hmac.compare_digest(expected, signature) for signature in offered)


@contextmanager
def receiver() -> Iterator[Receiver]:
    state: Receiver

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            received = Received({key.lower(): value for key, value in self.headers.items()}, body)
            message = received.json
            if message.get("type") == "verification":
                answer = {"challenge": message["challenge"] if state.echo else "wrong"}
                status = 200
            elif state.failures > 0:
                state.failures -= 1
                answer, status = {}, 503
            else:
                answer, status = {}, 200
            state.posts.put(received)
            payload = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state = Receiver(f"http://127.0.0.1:{server.server_address[1]}/hooks")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
