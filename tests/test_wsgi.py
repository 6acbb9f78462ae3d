"""The WSGI fast path (`mcp_django.wsgi`), driven in process with WSGI calls to the real application.

Sync tests: a WSGI application runs on a thread with no event loop of its own (it keeps one per thread).
`tests/live/test_wsgi_live.py` serves the example project with it under gunicorn.
"""

from __future__ import annotations

import gc
import io
import json
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.test import override_settings

from mcp_django import wsgi
from mcp_django.wsgi import WSGIFastPath, get_wsgi_application
from tests.http_support import ACCEPT, initialize, request, sse_messages, stateless, stateless_headers

pytestmark = [pytest.mark.urls("tests.wsgi_urls"), pytest.mark.django_db(transaction=True)]


@dataclass
class Answer:
    """What the application answered: the status, the headers by lower-case name, the body's chunks as sent."""

    status: int = 0
    headers: dict[str, str] = field(default_factory=dict)
    chunks: list[bytes] = field(default_factory=list)
    body_read: int = 0

    @property
    def body(self) -> bytes:
        return b"".join(self.chunks)

    def json(self) -> Any:
        return json.loads(self.body)


def call(
    app: Any, method: str, path: str, body: Any = None, headers: Mapping[str, str | None] | None = None, **environ: Any
) -> Answer:
    """Send one request to `app` as a WSGI server would, and collect its answer (a header given as None is left out)."""
    data = b"" if body is None else body if isinstance(body, bytes) else json.dumps(body).encode()
    all_headers: dict[str, str | None] = {
        "Host": "localhost",
        "Accept": ACCEPT,
        "Content-Type": "application/json",
        "Content-Length": str(len(data)),
        **(headers or {}),
    }
    stream = io.BytesIO(data)
    base: dict[str, Any] = {
        "REQUEST_METHOD": method,
        "SCRIPT_NAME": "",
        "PATH_INFO": path,
        "QUERY_STRING": "",
        "SERVER_NAME": "localhost",
        "SERVER_PORT": "80",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1",
        "wsgi.url_scheme": "http",
        "wsgi.input": stream,
        "wsgi.errors": sys.stderr,
    }
    for name, value in all_headers.items():
        if value is None:
            continue
        key = name.upper().replace("-", "_")
        base[key if key in ("CONTENT_TYPE", "CONTENT_LENGTH") else f"HTTP_{key}"] = value
    answer = Answer()

    def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> None:
        answer.status = int(status.split(" ", 1)[0])
        answer.headers = {name.lower(): value for name, value in headers}

    iterable = app({**base, **environ}, start_response)
    try:
        answer.chunks.extend(iterable)
    finally:
        if hasattr(iterable, "close"):
            iterable.close()
    answer.body_read = stream.tell()
    return answer


def echo_call(text: str = "hi") -> tuple[dict[str, Any], dict[str, str]]:
    return stateless("tools/call", {"name": "echo", "arguments": {"text": text}}), stateless_headers(
        "tools/call", "echo"
    )


def tool_call(name: str, arguments: dict[str, Any] | None = None, **meta: Any) -> tuple[dict[str, Any], dict[str, str]]:
    body = stateless("tools/call", {"name": name, "arguments": arguments or {}}, meta=meta or None)
    return body, stateless_headers("tools/call", name)


@pytest.fixture
def app() -> WSGIFastPath:
    return get_wsgi_application()


def test_a_call_is_answered_outside_djangos_request_cycle_with_the_security_headers(
    app: Any, django_requests: list[Any]
) -> None:
    body, headers = echo_call()

    answer = call(app, "POST", "/mcp", body, headers)

    assert answer.status == 200
    assert answer.json()["result"]["content"] == [{"type": "text", "text": "hi"}]
    assert django_requests == []
    assert "x-frame-options" not in answer.headers  # no middleware ran
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert answer.headers["cache-control"] == "no-store"
    assert answer.headers["content-security-policy"] == "default-src 'none'; frame-ancestors 'none'"
    assert answer.headers["content-length"] == str(len(answer.body))


def test_other_paths_and_the_opted_out_endpoint_are_served_by_django(app: Any, django_requests: list[Any]) -> None:
    body, headers = echo_call()

    page = call(app, "GET", "/hello/")
    view = call(app, "POST", "/view/mcp", body, headers)

    assert (page.status, page.body) == (200, b"hello")
    assert view.status == 200
    assert view.json()["result"]["content"] == [{"type": "text", "text": "hi"}]
    assert view.headers["x-frame-options"] == "DENY"  # Django's middleware
    assert len(django_requests) == 2


def test_a_session_cookie_sends_a_request_for_an_endpoint_with_session_authentication_to_the_view(
    app: Any, django_requests: list[Any]
) -> None:
    body, headers = echo_call()

    with_cookie = call(app, "POST", "/session/mcp", body, {**headers, "Cookie": "sessionid=abc"})
    without = call(app, "POST", "/session/mcp", body, headers)

    assert (with_cookie.status, without.status) == (200, 200)
    assert len(django_requests) == 1


def test_a_handshake_session_is_opened_and_serves_calls(app: Any) -> None:
    opened = call(app, "POST", "/mcp", initialize())
    session = opened.headers["mcp-session-id"]
    session_headers = {"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    done = call(app, "POST", "/mcp", initialized, session_headers)
    answer = call(
        app, "POST", "/mcp", request("tools/call", {"name": "echo", "arguments": {"text": "yo"}}), session_headers
    )

    assert opened.status == 200
    assert done.status == 202
    assert answer.json()["result"]["content"] == [{"type": "text", "text": "yo"}]


def test_a_sessions_get_stream_is_answered_405_as_wsgi_cannot_hold_it_open(app: Any) -> None:
    session = call(app, "POST", "/mcp", initialize()).headers["mcp-session-id"]

    answer = call(app, "GET", "/mcp", None, {"Accept": "text/event-stream", "Mcp-Session-Id": session})

    assert answer.status == 405
    assert answer.headers["allow"] == "POST, DELETE"


def test_a_sync_tool_runs_on_the_requests_own_thread(app: Any) -> None:
    body, headers = tool_call("thread_of_call")

    answer = call(app, "POST", "/where/mcp", body, headers)

    assert answer.json()["result"]["structuredContent"] == {"result": threading.get_ident()}


def test_a_sync_tool_past_its_time_limit_answers_the_timeout(app: Any) -> None:
    body, headers = tool_call("overruns", {"seconds": 0.2})

    answer = call(app, "POST", "/where/mcp", body, headers)

    assert answer.json()["error"]["data"] == {"reason": "timeout", "timeoutSeconds": 0.05}


def test_progress_is_sent_as_server_sent_events_chunk_by_chunk(app: Any) -> None:
    body, headers = tool_call("count", {"steps": 3}, progressToken="p")

    answer = call(app, "POST", "/mcp", body, headers)

    messages = sse_messages(answer.body)
    assert answer.headers["content-type"] == "text/event-stream"
    assert "content-length" not in answer.headers
    assert [
        message["params"]["progress"] for message in messages if message.get("method") == "notifications/progress"
    ] == [
        1,
        2,
        3,
    ]
    assert messages[-1]["result"]["content"][0]["type"] == "text"
    assert len(answer.chunks) == len(messages)  # each event left as it came, not collected


@override_settings(MCP_DJANGO={"MAX_REQUEST_BYTES": 100})
def test_a_body_over_the_limit_is_refused_413_without_reading_it(app: Any) -> None:
    body, headers = echo_call("x" * 200)

    answer = call(app, "POST", "/mcp", body, headers)

    assert answer.status == 413
    assert answer.body_read == 0


def test_a_refused_caller_is_answered_401_before_the_body_is_read_with_the_metadata_url(app: Any) -> None:
    body, headers = echo_call()

    answer = call(app, "POST", "/mcp", body, headers, SCRIPT_NAME="/prefix")
    refused = call(app, "POST", "/token/mcp", body, {**headers, "Authorization": "Token wrong"}, SCRIPT_NAME="/prefix")

    assert answer.status == 200
    assert refused.status == 401
    assert refused.body_read == 0
    assert (
        'resource_metadata="http://localhost/.well-known/oauth-protected-resource/prefix/token/mcp"'
        in (refused.headers["www-authenticate"])
    )


def test_a_host_outside_allowed_hosts_is_refused_with_400(app: Any) -> None:
    body, headers = echo_call()

    answer = call(app, "POST", "/mcp", body, {**headers, "Host": "evil.example"})

    assert answer.status == 400
    assert answer.json()["error"]["message"] == "Bad Request: invalid Host header"


def test_each_thread_keeps_one_event_loop_which_is_closed_when_the_thread_is_gone(app: Any) -> None:
    body, headers = echo_call()
    loops: list[Any] = []

    def serve_twice() -> None:
        for _ in range(2):
            assert call(app, "POST", "/mcp", body, headers).status == 200
            loops.append(wsgi._thread.loop)

    thread = threading.Thread(target=serve_twice)
    thread.start()
    thread.join(timeout=30)
    open_while_running = [loop.is_closed() for loop in loops]
    del thread
    gc.collect()

    assert loops[0] is loops[1]
    assert open_while_running == [False, False]
    assert loops[0].is_closed()


def test_headers_of_any_name_are_read_and_a_client_sending_new_names_cannot_grow_the_name_cache(app: Any) -> None:
    body, headers = echo_call("named")
    for number in range(wsgi._HEADER_NAMES_KEPT + 50):
        extra = {f"X-Probe-{number}": "1"}
        assert call(app, "POST", "/mcp", body, {**headers, **extra}).status == 200
    assert len(wsgi._header_names) <= wsgi._HEADER_NAMES_KEPT
    environ = {"HTTP_X_LATE_ONE": "v", "HTTP_MCP_NAME": "echo", "SERVER_NAME": "h", "CONTENT_TYPE": "t"}
    assert wsgi._headers(environ) == {"x-late-one": "v", "mcp-name": "echo", "content-type": "t"}
