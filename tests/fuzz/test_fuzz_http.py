"""Streamable HTTP under arbitrary requests, through the ASGI application (the fast path and the Django view):
any method, headers and body bytes; then well-formed headers around arbitrary JSON-RPC messages (13.13).

Never a 5xx but 503, never an unhandled exception, and every JSON-RPC reply valid: with the request's id
when the request reached the protocol core, else with its id or null.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_django.asgi import FastPath, get_asgi_application
from tests.fuzz.asgi_support import check_answer, serve
from tests.fuzz.strategies import STATELESS, VERSIONS, messages

pytestmark = [pytest.mark.urls("tests.asgi_urls"), pytest.mark.django_db(transaction=True)]

TOOLS = ["echo", "count", "nope"]
"""Tools of `tests.asgi_urls` a message may name (not `wait`, which waits on purpose), and an unknown one."""
PATHS = ["/mcp", "/mcp/", "/view/mcp", "/token/mcp", "/session/mcp"]
ACCEPT = "application/json, text/event-stream"

_app: list[FastPath] = []


def app() -> FastPath:
    if not _app:
        _app.append(get_asgi_application())
    return _app[0]


def _latin1(value: str) -> bytes:
    return value.encode("latin-1", "replace")


header_names = st.sampled_from(
    [
        "host",
        "accept",
        "content-type",
        "content-length",
        "mcp-protocol-version",
        "mcp-session-id",
        "mcp-method",
        "mcp-name",
        "mcp-param-text",
        "origin",
        "authorization",
        "cookie",
        "last-event-id",
        "x-forwarded-host",
        "x-forwarded-proto",
        "access-control-request-method",
    ]
).map(_latin1) | st.binary(min_size=1, max_size=16).map(bytes.lower)
header_values = st.sampled_from(
    [
        "localhost",
        ACCEPT,
        "application/json",
        "text/event-stream",
        "*/*",
        "0",
        "12",
        "-1",
        "99999999999999999999",
        *VERSIONS,
        "tools/call",
        "echo",
        "http://localhost:3000",
        "https://evil.example",
        "Bearer x",
        "Token abc",
        "Basic Zm9vOmJhcg==",
        "Basic !!!",
        "sessionid=abc; csrftoken=x",
    ]
).map(_latin1) | st.binary(max_size=48)
any_headers = st.lists(st.tuples(header_names, header_values), max_size=8)
any_bodies = st.binary(max_size=256) | messages(TOOLS).map(lambda message: json.dumps(message).encode())


@given(
    method=st.sampled_from(["POST", "GET", "DELETE", "OPTIONS", "PUT", "HEAD"]),
    path=st.sampled_from(PATHS),
    headers=any_headers,
    body=any_bodies,
)
async def test_any_request_is_answered_without_a_5xx_and_with_valid_json_rpc(
    method: str, path: str, headers: list[tuple[bytes, bytes]], body: bytes
) -> None:
    answer = await serve(app(), method, path, headers, body)

    try:
        message: Any = json.loads(body)
    except ValueError:
        message = None
    # The view's endpoints, and a request with a cookie on any endpoint (session authentication needs the
    # Django request), pass Django's middleware first.
    check_answer(answer, message, strict_id=False, django_pages=True)


@st.composite
def well_formed(draw: st.DrawFn) -> tuple[list[tuple[bytes, bytes]], Any]:
    """Headers a client would send, around an arbitrary message (stateless-era headers mirror it, mostly)."""
    message = draw(messages(TOOLS))
    version = draw(st.sampled_from([None, *VERSIONS]))
    headers = {"host": "localhost", "accept": ACCEPT, "content-type": "application/json"}
    if version is not None:
        headers["mcp-protocol-version"] = version
    if version == STATELESS and isinstance(message, dict):
        if isinstance(message.get("method"), str) and draw(st.booleans()):
            headers["mcp-method"] = message["method"]
        params = message.get("params")
        if isinstance(params, dict) and isinstance(params.get("name"), str) and draw(st.booleans()):
            headers["mcp-name"] = params["name"]
    if draw(st.booleans()):
        headers["mcp-session-id"] = draw(st.text(max_size=40))
    encoded = [(_latin1(name), _latin1(value)) for name, value in headers.items()]
    return encoded, message


@given(path=st.sampled_from(PATHS), request=well_formed())
async def test_a_well_formed_request_is_answered_with_its_own_id(
    path: str, request: tuple[list[tuple[bytes, bytes]], Any]
) -> None:
    headers, message = request
    answer = await serve(app(), "POST", path, headers, json.dumps(message).encode())

    check_answer(answer, message, strict_id=True)
