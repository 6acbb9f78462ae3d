"""The ASGI fast path (`mcp_django.asgi`), driven in process with raw ASGI calls to the real application.

Requests for the endpoints of `tests.asgi_urls` are served outside Django's request cycle; everything
else, the opted-out endpoint and session-cookie requests reach Django with its middleware.
"""

from __future__ import annotations

import asyncio
import gc
import json
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.test import override_settings
from rest_framework.authentication import BaseAuthentication, BasicAuthentication, SessionAuthentication

from mcp_django import Registry, asgi
from mcp_django.asgi import credentials_read, get_asgi_application
from mcp_django.auth import TokenAuthentication
from mcp_django.transports import resumable, routes
from tests import asgi_urls
from tests.http_support import ACCEPT, initialize, request, sse_messages, stateless, stateless_headers

pytestmark = [pytest.mark.urls("tests.asgi_urls"), pytest.mark.django_db(transaction=True)]

WAIT_S = 10


@dataclass
class Exchange:
    """One ASGI request: what the application sent back, and how much of the body it asked for."""

    status: int = 0
    headers: dict[str, str] = field(default_factory=dict)
    chunks: list[bytes] = field(default_factory=list)
    receive_calls: int = 0
    started: asyncio.Event = field(default_factory=asyncio.Event)
    first_chunk: asyncio.Event = field(default_factory=asyncio.Event)
    disconnect: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def body(self) -> bytes:
        return b"".join(self.chunks)

    def json(self) -> Any:
        return json.loads(self.body)


def http_scope(method: str, path: str, headers: Mapping[str, str | None], **extra: Any) -> dict[str, Any]:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": [
            (name.lower().encode("latin-1"), value.encode("latin-1"))
            for name, value in headers.items()
            if value is not None
        ],
        "client": ("127.0.0.1", 50000),
        "server": ("localhost", 80),
        **extra,
    }


async def call(
    app: Any,
    method: str,
    path: str,
    body: Any = None,
    headers: Mapping[str, str | None] | None = None,
    *,
    chunks: list[bytes] | None = None,
    exchange: Exchange | None = None,
    **scope: Any,
) -> Exchange:
    """Send one request to `app` and collect its answer; `exchange.disconnect` ends the client's side.

    A header given as None is left out.
    """
    exchange = exchange or Exchange()
    if chunks is None:
        chunks = [b"" if body is None else body if isinstance(body, bytes) else json.dumps(body).encode()]
    all_headers: dict[str, str | None] = {
        "Host": "localhost",
        "Accept": ACCEPT,
        "Content-Type": "application/json",
        **(headers or {}),
    }
    if method == "POST" and "Content-Length" not in all_headers and len(chunks) == 1:
        all_headers["Content-Length"] = str(len(chunks[0]))
    inbox = [
        {"type": "http.request", "body": chunk, "more_body": index < len(chunks) - 1}
        for index, chunk in enumerate(chunks)
    ]

    async def receive() -> dict[str, Any]:
        exchange.receive_calls += 1
        if inbox:
            return inbox.pop(0)
        await exchange.disconnect.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            exchange.status = message["status"]
            exchange.headers = {name.decode().lower(): value.decode() for name, value in message["headers"]}
            exchange.started.set()
        elif message["type"] == "http.response.body":
            exchange.chunks.append(message.get("body", b""))
            exchange.first_chunk.set()

    await asyncio.wait_for(app(http_scope(method, path, all_headers, **scope), receive, send), WAIT_S)
    return exchange


def echo_call(text: str = "hi") -> tuple[dict[str, Any], dict[str, str]]:
    return stateless("tools/call", {"name": "echo", "arguments": {"text": text}}), stateless_headers(
        "tools/call", "echo"
    )


@pytest.fixture
def app() -> asgi.FastPath:
    return get_asgi_application()


async def test_a_call_is_answered_outside_djangos_request_cycle(app: Any, django_requests: list[Any]) -> None:
    body, headers = echo_call()

    answer = await call(app, "POST", "/mcp", body, headers)

    assert answer.status == 200
    assert answer.json()["result"]["content"] == [{"type": "text", "text": "hi"}]
    assert django_requests == []
    assert "x-frame-options" not in answer.headers  # no middleware ran


async def test_fast_path_answers_carry_the_security_headers_of_a_json_api(app: Any) -> None:
    body, headers = echo_call()

    answer = await call(app, "POST", "/mcp", body, headers)

    assert answer.headers["content-type"] == "application/json"
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert answer.headers["cache-control"] == "no-store"
    assert answer.headers["referrer-policy"] == "no-referrer"
    assert answer.headers["content-security-policy"] == "default-src 'none'; frame-ancestors 'none'"
    assert answer.headers["content-length"] == str(len(answer.body))
    assert "strict-transport-security" not in answer.headers


@override_settings(SECURE_HSTS_SECONDS=3600, SECURE_HSTS_INCLUDE_SUBDOMAINS=True)
async def test_hsts_is_sent_on_https_only_when_configured(app: Any) -> None:
    body, headers = echo_call()

    secure = await call(app, "POST", "/mcp", body, headers, scheme="https")
    plain = await call(app, "POST", "/mcp", body, headers)

    assert secure.headers["strict-transport-security"] == "max-age=3600; includeSubDomains"
    assert "strict-transport-security" not in plain.headers


@override_settings(SECURE_HSTS_SECONDS=60, SECURE_PROXY_SSL_HEADER=("HTTP_X_FORWARDED_PROTO", "https"))
async def test_the_proxy_ssl_header_makes_a_request_secure_as_in_django(app: Any) -> None:
    body, headers = echo_call()

    answer = await call(app, "POST", "/mcp", body, {**headers, "X-Forwarded-Proto": "https"})

    assert answer.headers["strict-transport-security"] == "max-age=60"


@override_settings(SECURE_SSL_REDIRECT=True)
async def test_a_plain_http_request_is_left_to_django_when_ssl_redirect_is_on() -> None:
    app = get_asgi_application()  # after the override: Django's SecurityMiddleware reads it when it is built
    body, headers = echo_call()

    plain = await call(app, "POST", "/mcp", body, headers)
    secure = await call(app, "POST", "/mcp", body, headers, scheme="https")

    assert plain.status == 301
    assert plain.headers["location"] == "https://localhost/mcp"
    assert secure.status == 200


async def test_a_host_outside_allowed_hosts_is_refused_with_400(app: Any, django_requests: list[Any]) -> None:
    body, headers = echo_call()

    answer = await call(app, "POST", "/mcp", body, {**headers, "Host": "evil.example"})

    assert answer.status == 400
    assert answer.json()["error"]["message"] == "Bad Request: invalid Host header"
    assert django_requests == []


async def test_without_a_host_header_the_servers_name_is_checked(app: Any) -> None:
    body, headers = echo_call()
    without_host: dict[str, str | None] = {**headers, "Host": None}

    allowed = await call(app, "POST", "/mcp", body, without_host)
    refused = await call(app, "POST", "/mcp", body, without_host, server=("evil.example", 8000))

    assert allowed.status == 200
    assert refused.status == 400


async def test_a_foreign_origin_is_refused_with_403(app: Any, django_requests: list[Any]) -> None:
    body, headers = echo_call()

    answer = await call(app, "POST", "/mcp", body, {**headers, "Origin": "https://evil.example"})
    local = await call(app, "POST", "/mcp", body, {**headers, "Origin": "http://localhost:3000"})

    assert answer.status == 403
    assert answer.json()["error"]["message"] == "Forbidden: invalid Origin header"
    assert local.status == 200
    assert django_requests == []


async def test_a_bad_token_is_401_naming_the_resource_metadata_url(app: Any) -> None:
    body, headers = echo_call()

    answer = await call(app, "POST", "/token/mcp", body, {**headers, "Authorization": "Bearer nope"})

    assert answer.status == 401
    assert answer.headers["www-authenticate"] == (
        'Bearer error="invalid_token", '
        'resource_metadata="http://localhost/.well-known/oauth-protected-resource/token/mcp"'
    )


async def test_a_request_without_valid_credentials_is_401_with_its_body_unread(app: Any) -> None:
    body, headers = echo_call()

    answer = await call(app, "POST", "/token/mcp", body, {**headers, "Authorization": "Bearer nope"})

    assert answer.status == 401
    assert answer.receive_calls == 0


@override_settings(MCP_DJANGO={"REQUEST_BODY_TIMEOUT": 0.05})
async def test_a_body_that_stops_arriving_is_408_after_the_body_timeout(app: Any) -> None:
    headers = {"Host": "localhost", "Accept": ACCEPT, "Content-Type": "application/json", "Content-Length": "100"}
    sent: list[dict[str, Any]] = []
    first = True

    async def receive() -> dict[str, Any]:
        nonlocal first
        if first:
            first = False
            return {"type": "http.request", "body": b"{", "more_body": True}
        await asyncio.Event().wait()  # the rest never comes
        raise AssertionError("unreachable")

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await asyncio.wait_for(app(http_scope("POST", "/mcp", headers), receive, send), WAIT_S)

    assert sent[0]["status"] == 408
    error = json.loads(sent[1]["body"])["error"]
    assert error["message"] == "Request Timeout: the request did not arrive whole within 0.05 s"


async def test_a_path_that_is_no_endpoint_reaches_django_with_its_middleware(
    app: Any, django_requests: list[Any]
) -> None:
    answer = await call(app, "GET", "/hello/")

    assert answer.status == 200
    assert answer.body == b"hello"
    assert answer.headers["x-frame-options"] == "DENY"  # XFrameOptionsMiddleware
    assert len(django_requests) == 1


@pytest.mark.parametrize(
    "path",
    [
        pytest.param("/view/mcp", id="mounted-with-fast_path-false"),
        pytest.param("/custom/mcp", id="authentication-class-that-reads-the-request"),
    ],
)
async def test_these_endpoints_are_served_by_the_view_with_the_middleware(
    app: Any, django_requests: list[Any], path: str
) -> None:
    body, headers = echo_call()

    answer = await call(app, "POST", path, body, headers)

    assert answer.status == 200
    assert answer.json()["result"]["content"] == [{"type": "text", "text": "hi"}]
    assert answer.headers["x-frame-options"] == "DENY"
    assert len(django_requests) == 1


async def test_a_cookie_sends_a_request_to_the_view_when_session_authentication_needs_it(
    app: Any, django_requests: list[Any]
) -> None:
    body, headers = echo_call()

    without_cookie = await call(app, "POST", "/session/mcp", body, headers)
    assert django_requests == []
    with_cookie = await call(app, "POST", "/session/mcp", body, {**headers, "Cookie": "sessionid=whatever"})
    assert len(django_requests) == 1
    token_only = await call(app, "POST", "/token/mcp", body, {**headers, "Cookie": "sessionid=whatever"})

    assert (without_cookie.status, with_cookie.status, token_only.status) == (200, 200, 200)
    assert len(django_requests) == 1  # the token-only endpoint stayed on the fast path


class DeclaresHeaders(BaseAuthentication):
    mcp_credentials = "headers"


class MyToken(TokenAuthentication):
    pass


def test_what_authentication_classes_read_is_known_declared_or_assumed_to_be_the_request() -> None:
    assert credentials_read(TokenAuthentication) == "headers"
    assert credentials_read(MyToken) == "headers"
    assert credentials_read(BasicAuthentication) == "headers"
    assert credentials_read(SessionAuthentication) == "session"
    assert credentials_read(DeclaresHeaders) == "headers"
    assert credentials_read(asgi_urls.ReadsTheRequest) == "request"


@override_settings(MCP_DJANGO={"MAX_REQUEST_BYTES": 64})
async def test_a_body_over_the_limit_is_413_and_read_no_further_than_one_byte_past_it(app: Any) -> None:
    answer = await call(app, "POST", "/mcp", chunks=[b" " * 40] * 5, headers=stateless_headers("tools/list"))

    assert answer.status == 413
    assert answer.json()["error"]["message"] == "Payload Too Large: the body exceeds 64 bytes"
    assert answer.receive_calls == 2  # 80 bytes read: past the limit, so the rest is never asked for


@override_settings(MCP_DJANGO={"MAX_REQUEST_BYTES": 64})
async def test_a_content_length_over_the_limit_is_refused_unread(app: Any) -> None:
    headers = {**stateless_headers("tools/list"), "Content-Length": "1000"}

    answer = await call(app, "POST", "/mcp", chunks=[b" " * 1000], headers=headers)

    assert answer.status == 413
    assert answer.receive_calls == 0


async def test_progress_streams_as_server_sent_events_chunk_by_chunk(app: Any) -> None:
    body = stateless("tools/call", {"name": "count", "arguments": {"steps": 3}}, meta={"progressToken": "p"})

    answer = await call(app, "POST", "/mcp", body, stateless_headers("tools/call", "count"))

    assert answer.status == 200
    assert answer.headers["content-type"] == "text/event-stream"
    assert answer.headers["cache-control"] == "no-cache"
    assert answer.headers["x-content-type-options"] == "nosniff"
    events = [chunk for chunk in answer.chunks if chunk]
    assert len(events) == 4  # each message was sent as it came, not collected
    messages = sse_messages(answer.body)
    assert [message["params"]["progress"] for message in messages[:-1]] == [1, 2, 3]
    assert messages[-1]["result"]["content"] == [{"type": "text", "text": "counted to 3"}]


async def test_a_client_disconnect_cancels_its_streamed_request(app: Any) -> None:
    asgi_urls.cancelled.clear()
    body = stateless("tools/call", {"name": "wait", "arguments": {"name": "w1"}}, meta={"progressToken": "p"})
    exchange = Exchange()

    serving = asyncio.ensure_future(
        call(app, "POST", "/mcp", body, stateless_headers("tools/call", "wait"), exchange=exchange)
    )
    await asyncio.wait_for(exchange.first_chunk.wait(), WAIT_S)
    exchange.disconnect.set()
    await asyncio.wait_for(serving, WAIT_S)

    assert exchange.status == 200
    assert sse_messages(exchange.body)[0]["params"]["progress"] == 1
    assert asgi_urls.cancelled == ["w1"]


async def test_a_handshake_session_lives_from_initialize_to_delete_on_the_fast_path(
    app: Any, django_requests: list[Any]
) -> None:
    opened = await call(app, "POST", "/mcp", initialize())
    session = {"Mcp-Session-Id": opened.headers["mcp-session-id"]}

    initialized = await call(app, "POST", "/mcp", {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    listed = await call(app, "POST", "/mcp", request("tools/list", id=2), session)
    deleted = await call(app, "DELETE", "/mcp", headers=session)
    after = await call(app, "POST", "/mcp", request("tools/list", id=3), session)

    assert (opened.status, initialized.status, deleted.status, after.status) == (200, 202, 204, 404)
    assert {tool["name"] for tool in listed.json()["result"]["tools"]} >= {"echo", "count"}
    assert django_requests == []


async def test_a_session_request_answered_in_one_piece_keeps_no_resumable_stream(app: Any) -> None:
    opened = await call(app, "POST", "/mcp", initialize())
    session = {"Mcp-Session-Id": opened.headers["mcp-session-id"]}
    before = len(resumable.buffers)

    answers = [await call(app, "POST", "/mcp", request("tools/list", id=index), session) for index in range(2, 12)]

    assert [answer.status for answer in answers] == [200] * 10
    assert answers[0].headers["content-type"] == "application/json"
    assert len(resumable.buffers) == before  # only streams that sent events can be resumed


async def test_the_script_name_is_removed_before_resolving(app: Any, django_requests: list[Any]) -> None:
    body, headers = echo_call()

    answer = await call(app, "POST", "/prefix/mcp", body, headers, root_path="/prefix")
    refused = await call(
        app, "POST", "/prefix/token/mcp", body, {**headers, "Authorization": "Bearer x"}, root_path="/prefix"
    )

    assert answer.status == 200
    assert django_requests == []
    assert (
        'resource_metadata="http://localhost/.well-known/oauth-protected-resource/prefix/token/mcp"'
        in (refused.headers["www-authenticate"])
    )


async def test_routes_are_forgotten_when_the_root_urlconf_changes(app: Any) -> None:
    body, headers = echo_call()
    before = await call(app, "POST", "/mcp", body, headers)

    with override_settings(ROOT_URLCONF="tests.access_urls"):
        after = await call(app, "POST", "/mcp", body, headers)

    assert before.status == 200
    assert after.status == 401  # /mcp there is another endpoint, closed to anonymous callers


async def test_the_route_cache_stays_bounded_under_random_paths(app: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(routes, "ROUTE_CACHE_SIZE", 4)
    body, headers = echo_call()

    for number in range(10):
        await call(app, "GET", f"/random/{number}/")
    answer = await call(app, "POST", "/mcp", body, headers)

    assert answer.status == 200
    assert len(app._routes) == 4


async def test_the_lifespan_protocol_is_answered() -> None:
    app = get_asgi_application()
    inbox = [{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}]
    sent: list[MutableMapping[str, Any]] = []

    async def receive() -> MutableMapping[str, Any]:
        return inbox.pop(0)

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(message)

    await asyncio.wait_for(app({"type": "lifespan", "asgi": {"version": "3.0"}}, receive, send), WAIT_S)

    assert sent == [{"type": "lifespan.startup.complete"}, {"type": "lifespan.shutdown.complete"}]


async def test_other_scope_types_go_to_the_wrapped_application() -> None:
    seen: list[str] = []

    async def wrapped(scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        seen.append(scope["type"])

    async def receive() -> MutableMapping[str, Any]:
        return {"type": "http.disconnect"}

    async def send(message: MutableMapping[str, Any]) -> None:
        pass

    app = get_asgi_application(wrapped)
    await app({"type": "websocket", "path": "/ws/mcp", "headers": []}, receive, send)
    await app(http_scope("GET", "/hello/", {"Host": "localhost"}), receive, send)

    assert seen == ["websocket", "http"]


def test_building_the_application_puts_what_is_loaded_out_of_the_collectors_reach() -> None:
    gc.unfreeze()
    get_asgi_application()
    assert gc.get_freeze_count() > 0  # a full collection no longer walks Django's heap (docs/fast-path.md)


def test_building_the_application_compiles_every_registry_s_definitions_before_the_first_listing() -> None:
    registry = Registry("startup-warm")

    @registry.tool
    def echo(text: str) -> str:
        """Say it back."""
        return text

    registry.freeze()
    tool = registry.tools["echo"]
    assert "wire" not in vars(tool)  # plain annotations: compiled on first use (a management command never uses it)
    get_asgi_application()
    assert "wire" in vars(tool)  # a serving process: before gc.freeze(), not on the first tools/list
