"""Request limits over real sockets: bodies refused before they are read, 401 before the body, 431 for
oversized headers, 408 for a body that never completes; under uvicorn (the fast path's own limits)
and under daphne with mcp_django's guard (`python -m mcp_django.servers.daphne`).

Every answer is awaited on a raw socket with a bound, never a sleep: "refused early" means the
answer arrives while the client has not sent the body, or is still sending it.
"""

from __future__ import annotations

import json
import select
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.conftest import LiveServer, serve_example

pytestmark = pytest.mark.live

LIMIT = 64 * 1024
TIMEOUT_S = 1
LIMITS = {"MAX_REQUEST_BYTES": LIMIT, "REQUEST_BODY_TIMEOUT": TIMEOUT_S}
STREAMED = 64 * 1024 * 1024
"""What a client tries to send past the limit: far more than the sockets' buffers hold between the two ends."""
ANSWER_WAIT_S = 20.0


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    def error(self) -> dict[str, Any]:
        error: dict[str, Any] = json.loads(self.body)["error"]
        return error


def _env(live_server_env: dict[str, str]) -> dict[str, str]:
    return {
        **live_server_env,
        "DJANGO_SETTINGS_MODULE": "tests.live.limits_settings",
        "MCP_TEST_LIMITS": json.dumps(LIMITS),
    }


@pytest.fixture(scope="module")
def uvicorn_server(live_server_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """The example project under uvicorn (httptools), with a 64 KiB body limit and a 1 s body timeout."""
    env, logs = _env(live_server_env), tmp_path_factory.mktemp("uvicorn-log")
    with serve_example(env, logs, server="uvicorn") as server:
        yield server


@pytest.fixture(scope="module")
def guarded_daphne(live_server_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """The example project under `python -m mcp_django.servers.daphne`, with the same limits."""
    env, logs = _env(live_server_env), tmp_path_factory.mktemp("guarded-log")
    with serve_example(env, logs, server="guarded-daphne") as server:
        yield server


def _address(server: LiveServer) -> tuple[str, int]:
    host, port = server.base_url.removeprefix("http://").split(":")
    return host, int(port)


def head(server: LiveServer, path: str = "/mcp", *, token: str | None = None, **headers: str) -> bytes:
    """The request line and headers of an MCP POST, ending with the blank line."""
    host, port = _address(server)
    lines = [
        f"POST {path} HTTP/1.1",
        f"Host: {host}:{port}",
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
        "MCP-Protocol-Version: 2025-06-18",
    ]
    if token is not None:
        lines.append(f"Authorization: Bearer {token}")
    lines += [f"{name.replace('_', '-')}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def read_answer(sock: socket.socket) -> Answer:
    """Read one HTTP response (status, headers, a body of `Content-Length` bytes) within ANSWER_WAIT_S."""
    sock.settimeout(ANSWER_WAIT_S)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, f"the server closed the connection without an answer: {data!r}"
        data += chunk
    header_block, body = data.split(b"\r\n\r\n", 1)
    status_line, *header_lines = header_block.decode("latin-1").split("\r\n")
    headers = {name.lower(): value.strip() for name, value in (line.split(":", 1) for line in header_lines)}
    length = int(headers.get("content-length", "0"))
    while len(body) < length:
        chunk = sock.recv(65536)
        assert chunk, "the server closed the connection in the middle of its answer"
        body += chunk
    return Answer(int(status_line.split()[1]), headers, body[:length])


def send_and_read(server: LiveServer, data: bytes) -> Answer:
    """Send `data` (which may stop short of the body the headers announce) and read the answer."""
    with socket.create_connection(_address(server), timeout=ANSWER_WAIT_S) as sock:
        sock.sendall(data)
        return read_answer(sock)


def stream_until_answered(
    server: LiveServer, request_head: bytes, *, limit: int = STREAMED, chunked: bool = True
) -> tuple[Answer, int]:
    """Send a body of up to `limit` bytes, stopping when the answer comes; the answer and what was sent."""
    piece = b" " * 65536
    if chunked:
        piece = b"%x\r\n%s\r\n" % (len(piece), piece)
    sent = 0
    pending = b""
    with socket.create_connection(_address(server), timeout=ANSWER_WAIT_S) as sock:
        sock.sendall(request_head)
        while sent < limit:
            readable, writable, _ = select.select([sock], [sock], [], ANSWER_WAIT_S)
            if readable:
                break
            assert writable, "the server neither answered nor read within the wait"
            pending = pending or piece
            try:
                count = sock.send(pending)
            except (BrokenPipeError, ConnectionResetError):
                break
            pending = pending[count:]
            sent += count
        return read_answer(sock), sent


# -- uvicorn: the fast path's own limits ------------------------------------------------------------


def test_an_unauthenticated_post_is_401_before_its_body_is_sent(uvicorn_server: LiveServer) -> None:
    # The headers announce 60 KiB (under the limit) and none of it is sent: the answer cannot wait for it.
    answer = send_and_read(uvicorn_server, head(uvicorn_server, Content_Length=str(60 * 1024)))

    assert answer.status == 401
    assert answer.error()["message"] == "Unauthorized: Authentication credentials were not provided."
    assert answer.headers["www-authenticate"].startswith("Bearer resource_metadata=")


def test_a_bad_token_is_401_before_the_body_is_sent(uvicorn_server: LiveServer) -> None:
    answer = send_and_read(uvicorn_server, head(uvicorn_server, token="not-a-token", Content_Length="1000"))

    assert answer.status == 401


def test_a_declared_length_over_the_limit_is_413_before_the_body_is_sent(uvicorn_server: LiveServer) -> None:
    request_head = head(uvicorn_server, token=uvicorn_server.tokens["alice"], Content_Length=str(2**30))

    answer = send_and_read(uvicorn_server, request_head)

    assert answer.status == 413
    assert answer.error()["message"] == f"Payload Too Large: the body exceeds {LIMIT} bytes"


def test_a_chunked_body_past_the_limit_is_413_while_the_client_is_still_sending(uvicorn_server: LiveServer) -> None:
    request_head = head(uvicorn_server, token=uvicorn_server.tokens["alice"], Transfer_Encoding="chunked")

    answer, sent = stream_until_answered(uvicorn_server, request_head)

    assert answer.status == 413
    assert sent < STREAMED // 4  # answered long before the client was done: nothing past the limit was kept


def test_a_view_served_endpoint_ends_the_body_at_the_limit_too(uvicorn_server: LiveServer) -> None:
    # /conformance/view/mcp opts out of the fast path: Django's handler would read the whole body first.
    request_head = head(uvicorn_server, "/conformance/view/mcp", Transfer_Encoding="chunked")

    answer, sent = stream_until_answered(uvicorn_server, request_head)

    assert answer.status == 413
    assert answer.error()["message"] == f"Payload Too Large: the body exceeds {LIMIT} bytes"
    assert sent < STREAMED // 4


def test_a_body_that_never_completes_is_408_after_the_timeout(uvicorn_server: LiveServer) -> None:
    request_head = head(uvicorn_server, token=uvicorn_server.tokens["alice"], Content_Length="100")

    answer = send_and_read(uvicorn_server, request_head + b'{"jsonrpc": "2.0"')

    assert answer.status == 408
    assert answer.error()["message"] == f"Request Timeout: the request did not arrive whole within {TIMEOUT_S} s"
    assert answer.headers["connection"] == "close"


def test_oversized_headers_are_431(uvicorn_server: LiveServer) -> None:
    # uvicorn with httptools passes 64 KiB of headers on; the fast path answers them.
    answer = send_and_read(uvicorn_server, head(uvicorn_server, X_Padding="a" * 65536, Content_Length="2") + b"{}")

    assert answer.status == 431
    assert answer.error()["message"] == "Request Header Fields Too Large: over 16384 bytes"


# -- daphne, guarded: the limits applied while the request arrives -------------------------------------


def test_daphne_guarded_refuses_a_declared_gigabyte_before_reading_it(guarded_daphne: LiveServer) -> None:
    answer = send_and_read(guarded_daphne, head(guarded_daphne, Content_Length=str(2**30)))

    assert answer.status == 413
    assert answer.headers["connection"] == "close"
    assert answer.error()["message"] == f"Payload Too Large: the body exceeds {LIMIT} bytes"


def test_daphne_guarded_ends_a_chunked_body_at_the_limit(guarded_daphne: LiveServer) -> None:
    answer, sent = stream_until_answered(guarded_daphne, head(guarded_daphne, Transfer_Encoding="chunked"))

    assert answer.status == 413
    assert sent < STREAMED // 4


def test_daphne_guarded_answers_oversized_headers_with_431(guarded_daphne: LiveServer) -> None:
    # One 64 KiB line: Twisted alone drops the connection without a word.
    answer = send_and_read(guarded_daphne, head(guarded_daphne, X_Padding="a" * 65536, Content_Length="2") + b"{}")

    assert answer.status == 431
    assert answer.error()["message"] == "Request Header Fields Too Large: over 16384 bytes"


def test_daphne_guarded_answers_a_body_that_never_completes_with_408(guarded_daphne: LiveServer) -> None:
    answer = send_and_read(guarded_daphne, head(guarded_daphne, Content_Length="100") + b'{"jsonrpc": "2.0"')

    assert answer.status == 408
    assert answer.error()["message"] == f"Request Timeout: the request did not arrive whole within {TIMEOUT_S} s"


def test_daphne_guarded_still_serves_mcp_and_the_admin(guarded_daphne: LiveServer) -> None:
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    body = json.dumps(initialize).encode()
    request_head = head(guarded_daphne, "/conformance/mcp", Content_Length=str(len(body)))

    answer = send_and_read(guarded_daphne, request_head + body)
    host, port = _address(guarded_daphne)
    admin = send_and_read(guarded_daphne, f"GET /admin/login/ HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())

    assert answer.status == 200
    assert json.loads(answer.body)["result"]["protocolVersion"] == "2025-06-18"
    assert admin.status == 200


# -- streams -------------------------------------------------------------------------------------------


def test_a_get_stream_sends_its_headers_and_a_priming_event_at_once(example_server: LiveServer) -> None:
    # Under daphne the status line leaves with the first chunk: without a priming event, nothing would
    # come until the first notification.
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    body = json.dumps(initialize).encode()
    request_head = head(example_server, "/conformance/mcp", Content_Length=str(len(body)))
    opened = send_and_read(example_server, request_head + body)
    session_id = opened.headers["mcp-session-id"]
    host, port = _address(example_server)
    get = (
        f"GET /conformance/mcp HTTP/1.1\r\nHost: {host}:{port}\r\nAccept: text/event-stream\r\n"
        f"Mcp-Session-Id: {session_id}\r\nMCP-Protocol-Version: 2025-11-25\r\n\r\n"
    ).encode()

    with socket.create_connection(_address(example_server), timeout=ANSWER_WAIT_S) as sock:
        sock.sendall(get)
        received = b""
        while b"\ndata: \n\n" not in received:
            chunk = sock.recv(65536)
            assert chunk, f"the stream ended before its priming event: {received!r}"
            received += chunk

    assert received.startswith(b"HTTP/1.1 200 ")
    assert b"content-type: text/event-stream" in received.lower()
    assert b"\nretry: 1000\n" in received
