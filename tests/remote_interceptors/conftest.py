"""A real interceptor server for these tests: daphne serving tests/remote_interceptors/host_urls.py."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Iterator

import pytest

from mcp_django.client.connection import pool
from mcp_django.gateway.interceptor_servers import forget_discoveries
from tests.conftest import LiveServer, serve_example


@pytest.fixture(scope="session")
def interceptor_host(live_server_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """daphne serving `host/mcp` (guard, rewrite, the echo tool) and `slow/mcp` (a stalling validator and sink)."""
    env = {**live_server_env, "DJANGO_SETTINGS_MODULE": "tests.remote_interceptors.host_settings"}
    with serve_example(env, tmp_path_factory.mktemp("interceptor-host")) as server:
        yield server


@pytest.fixture
def closed_url() -> str:
    """The URL of a loopback port nobody listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/mcp"


@pytest.fixture(autouse=True)
async def _fresh_connections() -> AsyncIterator[None]:
    """Every test lists the servers anew, and closes the connections its event loop opened."""
    forget_discoveries()
    yield
    forget_discoveries()
    await pool.aclose()
