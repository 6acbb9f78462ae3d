"""R-4 over real sockets: a 1 GiB unauthenticated body to the OAuth server's views, under daphne with mcp_django's
guard (`python -m mcp_django.servers.daphne`), is refused as it arrives and never grows the worker.

The client really sends the gigabyte (declared, or chunked) until the server answers; the worker's peak
resident memory (`VmHWM`, from `/proc`) stays under 300 MB, where it used to grow by the body's size.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import LiveServer, serve_example
from tests.live.test_limits_live import Answer, send_and_read, stream_until_answered

pytestmark = pytest.mark.live

GIB = 2**30
PEAK_RSS_LIMIT_MB = 300
LIMIT = 64 * 1024
PATHS = ["/oauth/register/", "/oauth/token/", "/oauth/login/"]


@pytest.fixture(scope="module")
def guarded_daphne(live_server_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with serve_example(live_server_env, tmp_path_factory.mktemp("oauth-limits-log"), server="guarded-daphne") as server:
        yield server


def peak_rss_mb(server: LiveServer) -> float:
    status = Path(f"/proc/{server.process.pid}/status").read_text()
    kilobytes = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM:"))
    return kilobytes / 1024


def send_gigabyte(server: LiveServer, path: str, *, chunked: bool) -> tuple[Answer, int]:
    """POST a 1 GiB body to `path`, sending until the server answers; the answer and how much was sent."""
    host, port = server.base_url.removeprefix("http://").split(":")
    framing = "Transfer-Encoding: chunked" if chunked else f"Content-Length: {GIB}"
    head = f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n{framing}\r\n\r\n"
    return stream_until_answered(server, head.encode("latin-1"), limit=GIB, chunked=chunked)


@pytest.mark.parametrize("chunked", [False, True], ids=["declared", "chunked"])
@pytest.mark.parametrize("path", PATHS)
def test_r4_a_gigabyte_to_the_oauth_server_is_413_and_the_worker_stays_small(
    guarded_daphne: LiveServer, path: str, chunked: bool
) -> None:
    answer, sent = send_gigabyte(guarded_daphne, path, chunked=chunked)

    assert answer.status == 413, answer.body
    assert answer.error()["message"] == f"Payload Too Large: the body exceeds {LIMIT} bytes"
    assert sent < GIB // 16
    assert peak_rss_mb(guarded_daphne) < PEAK_RSS_LIMIT_MB


def test_r4_the_oauth_server_still_answers_under_the_guard(guarded_daphne: LiveServer) -> None:
    host, port = guarded_daphne.base_url.removeprefix("http://").split(":")
    request = f"GET /.well-known/oauth-authorization-server HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n"
    answer = send_and_read(guarded_daphne, request.encode("latin-1"))

    assert answer.status == 200
    assert b'"registration_endpoint"' in answer.body
