"""`/ws/mcp` through the round-robin (tests/live/test_websocket_live.py): HAProxy passes the upgrade on, and
the admin login that gives the session cookie alternates between the workers. Each worker upgrades it on
its own too: uvicorn needs a WebSocket library for that (`websockets`, in the test extra; `uvicorn[standard]`).

Collected here against `example_server`, two workers (daphne and uvicorn) on PostgreSQL and the Redis channel
layer behind the round-robin (tests/production/conftest.py): each request goes to the next worker.
"""

from __future__ import annotations

import pytest

from tests.http_support import request
from tests.live.test_websocket_live import *  # the tests, collected here against the round-robin `example_server`
from tests.live.test_websocket_live import connect
from tests.live.websocket_support import WebSocket
from tests.production.site import RoundRobin

pytestmark = pytest.mark.production


def test_every_worker_upgrades_the_websocket(example_server: RoundRobin, sockets: list[WebSocket]) -> None:
    """Each worker on its own: uvicorn without a WebSocket library answers the upgrade as a plain request (404)."""
    for worker in example_server.workers:
        socket = connect(worker, sockets, Authorization=f"Bearer {worker.tokens['alice']}")

        assert socket.status == 101, worker.log_tail()
        assert socket.request(request("ping", id=1))["result"] == {}
