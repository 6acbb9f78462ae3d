"""U-5 over real sockets (issue 36): a project serving the package's URLconfs, and nothing else, under uvicorn and
under daphne with mcp_django's guard. Every view they mount is sent a POST whose `Content-Length` is a
gigabyte, and its body streamed until the answer comes: each answers 413 before taking more than a few
socket buffers of it, and the worker's resident memory does not grow.

Before, the `/mcp/upstream/` pages (every project including `mcp_django.urls` mounts them) read a whole
body from anyone: 400 MB of POST added 400 MB to the worker, and then it answered 403.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.body_bounds_support import bound_of, package_views
from tests.conftest import LiveServer, fresh_database, serve_example
from tests.live.test_limits_live import stream_until_answered

pytestmark = pytest.mark.live

GIB = 2**30
SOCKET_SLACK = 64 * 2**20
"""What the sockets' buffers between the two ends may take before the answer is read (far less than a GiB)."""
GROWTH_LIMIT_MB = 32
PEAK_RSS_LIMIT_MB = 300


@pytest.fixture(scope="module", params=["uvicorn", "guarded-daphne"])
def server(
    request: pytest.FixtureRequest, seeded_database: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    database = fresh_database(seeded_database, tmp_path_factory.mktemp("bounds-db"))
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.live.body_bounds_settings",
        "MCP_EXAMPLE_DB": str(database),
        "PYTHONUNBUFFERED": "1",
    }
    with serve_example(env, tmp_path_factory.mktemp("bounds-log"), server=request.param) as live:
        yield live


def resident_mb(server: LiveServer, field: str = "VmRSS") -> float:
    status = Path(f"/proc/{server.process.pid}/status").read_text()
    return next(int(line.split()[1]) for line in status.splitlines() if line.startswith(f"{field}:")) / 1024


def test_u5_every_view_the_package_mounts_refuses_a_gigabyte_body_before_reading_it(server: LiveServer) -> None:
    host_port = server.base_url.removeprefix("http://")
    token = server.tokens["alice"]  # so an MCP endpoint reaches its body limit instead of answering 401
    before = resident_mb(server)
    answers = {}
    for path, view in package_views():
        head = (
            f"POST {path} HTTP/1.1\r\nHost: {host_port}\r\nContent-Type: application/json\r\n"
            f"Accept: application/json, text/event-stream\r\nAuthorization: Bearer {token}\r\n"
            f"Content-Length: {GIB}\r\n\r\n"
        )
        answer, sent = stream_until_answered(server, head.encode("latin-1"), limit=GIB, chunked=False)
        answers[path] = (answer.status, answer.error()["message"] if answer.status == 413 else answer.body[:200])
        assert sent < SOCKET_SLACK, path
        assert answers[path] == (413, f"Payload Too Large: the body exceeds {bound_of(view)} bytes"), path

    assert len(answers) >= 18
    assert resident_mb(server) - before < GROWTH_LIMIT_MB
    assert resident_mb(server, "VmHWM") < PEAK_RSS_LIMIT_MB
