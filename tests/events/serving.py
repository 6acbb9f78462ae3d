"""The test process's own Django served over a real socket: uvicorn on a thread, on a free loopback port.

What it serves reads the test database and the process's channel layer, so a test emits with `emit()` (or
saves a Book) and an `MCPClient` receives over HTTP what the server pushes; the server stops when the block
ends.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn

from tests.events.support import until


@contextmanager
def serving(app: Any = None) -> Iterator[str]:
    """Serve `app` (the example project's ASGI application by default) until the block ends; yields its base URL."""
    if app is None:
        from example_project.asgi import application as app
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, lifespan="off", log_level="warning", timeout_graceful_shutdown=1)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        assert until(lambda: server.started), "uvicorn did not start"
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()
