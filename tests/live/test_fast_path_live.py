"""The example project's fast path over a real socket (daphne): Host and Origin refused, headers, SSE,
and the requests it leaves to Django (the admin, the view-served conformance copy) served with middleware."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest

from tests.conftest import LiveServer
from tests.http_support import ACCEPT, stateless, stateless_headers

pytestmark = pytest.mark.live


def call(tool: str, meta: dict[str, Any] | None = None) -> tuple[bytes, dict[str, str]]:
    body = stateless("tools/call", {"name": tool, "arguments": {}}, meta=meta)
    headers = {"Accept": ACCEPT, "Content-Type": "application/json", **stateless_headers("tools/call", tool)}
    return json.dumps(body).encode(), headers


async def test_the_fast_path_answers_with_its_own_security_headers_and_no_middleware(
    example_server: LiveServer,
) -> None:
    body, headers = call("test_simple_text")
    async with httpx2.AsyncClient() as http:
        response = await http.post(example_server.url("/conformance/mcp"), content=body, headers=headers)

    assert response.status_code == 200
    assert response.json()["result"]["content"][0]["text"] == "This is a simple text response for testing."
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Cache-Control"] == "no-store"
    assert response.headers["Referrer-Policy"] == "no-referrer"
    assert "X-Frame-Options" not in response.headers
    assert "Vary" not in response.headers  # no session middleware


@pytest.mark.parametrize(
    ("header", "status", "message"),
    [
        pytest.param({"Host": "evil.example"}, 400, "Bad Request: invalid Host header", id="host"),
        pytest.param({"Origin": "https://evil.example"}, 403, "Forbidden: invalid Origin header", id="origin"),
    ],
)
async def test_a_foreign_host_or_origin_is_refused_on_the_fast_path(
    example_server: LiveServer, header: dict[str, str], status: int, message: str
) -> None:
    body, headers = call("test_simple_text")
    async with httpx2.AsyncClient() as http:
        response = await http.post(example_server.url("/conformance/mcp"), content=body, headers={**headers, **header})

    assert response.status_code == status
    assert response.json()["error"]["message"] == message


async def test_other_paths_and_the_opted_out_endpoint_reach_django_with_its_middleware(
    example_server: LiveServer,
) -> None:
    body, headers = call("test_simple_text")
    async with httpx2.AsyncClient() as http:
        admin = await http.get(example_server.url("/admin/login/"))
        view = await http.post(example_server.url("/conformance/view/mcp"), content=body, headers=headers)

    assert admin.status_code == 200
    assert admin.headers["X-Frame-Options"] == "DENY"  # XFrameOptionsMiddleware
    assert admin.headers["Cross-Origin-Opener-Policy"] == "same-origin"  # SecurityMiddleware
    assert "csrftoken" in admin.cookies  # CsrfViewMiddleware
    assert view.status_code == 200
    assert view.json()["result"]["content"][0]["text"] == "This is a simple text response for testing."
    assert view.headers["X-Frame-Options"] == "DENY"


async def test_progress_streams_over_the_socket_as_server_sent_events(example_server: LiveServer) -> None:
    body, headers = call("test_tool_with_progress", {"progressToken": "p"})
    async with (
        httpx2.AsyncClient(timeout=30) as http,
        http.stream("POST", example_server.url("/conformance/mcp"), content=body, headers=headers) as response,
    ):
        assert response.headers["Content-Type"] == "text/event-stream"
        text = (await response.aread()).decode()

    messages = [json.loads(line[len("data: ") :]) for line in text.splitlines() if line.startswith("data: ")]
    assert [message["params"]["progress"] for message in messages[:-1]] == [0, 50, 100]
    assert messages[-1]["result"]["content"][0]["text"] == "p"
