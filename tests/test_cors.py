"""CORS for browser clients (`mcp_django.transports.cors`): preflights answered on the fast path and the Django view
for admitted origins, MCP's headers allowed and exposed, and nothing at all for any other origin."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_django import asgi
from mcp_django.asgi import get_asgi_application
from tests.http_support import initialize
from tests.test_asgi import call, echo_call

pytestmark = [
    pytest.mark.urls("tests.asgi_urls"),
    pytest.mark.django_db(transaction=True),
    pytest.mark.parametrize("path", ["/mcp", "/view/mcp"]),  # the fast path, and the Django view
]

APP = "https://app.example.com"
REQUESTED = "authorization, content-type, mcp-protocol-version, mcp-session-id, mcp-method, mcp-name, mcp-param-region"


@pytest.fixture
def app(settings: Any) -> asgi.FastPath:
    settings.MCP_DJANGO = {**settings.MCP_DJANGO, "ALLOWED_ORIGINS": [APP]}
    return get_asgi_application()


def preflight(origin: str, headers: str = REQUESTED, **extra: str) -> dict[str, str]:
    return {
        "Origin": origin,
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": headers,
        **extra,
    }


def cors_of(headers: dict[str, str]) -> dict[str, str]:
    return {name: value for name, value in headers.items() if name.startswith("access-control-")}


async def test_a_preflight_from_an_allowed_origin_is_answered_without_credentials(app: Any, path: str) -> None:
    answer = await call(app, "OPTIONS", path, headers=preflight(APP))

    assert answer.status == 204
    assert answer.body == b""
    assert cors_of(answer.headers) == {
        "access-control-allow-origin": APP,
        "access-control-allow-methods": "GET, POST, DELETE",
        "access-control-allow-headers": REQUESTED,
        "access-control-max-age": "600",
    }
    assert answer.headers["vary"] == "Origin"


async def test_a_localhost_page_is_an_allowed_origin_as_admission_says(app: Any, path: str) -> None:
    answer = await call(app, "OPTIONS", path, headers=preflight("http://localhost:6274", "content-type"))

    assert answer.status == 204
    assert answer.headers["access-control-allow-origin"] == "http://localhost:6274"
    assert answer.headers["access-control-allow-headers"] == "content-type"


async def test_a_preflight_allows_only_the_headers_mcp_clients_send(app: Any, path: str) -> None:
    answer = await call(app, "OPTIONS", path, headers=preflight(APP, "X-Forwarded-User, Authorization, Cookie"))

    assert answer.headers["access-control-allow-headers"] == "authorization"


async def test_a_preflight_from_another_origin_gets_no_cors_headers(app: Any, path: str) -> None:
    answer = await call(app, "OPTIONS", path, headers=preflight("https://evil.example"))

    assert answer.status == 403
    assert answer.json()["error"]["message"] == "Forbidden: invalid Origin header"
    assert cors_of(answer.headers) == {}


async def test_a_preflight_to_a_host_outside_allowed_hosts_is_not_answered(app: Any, path: str) -> None:
    answer = await call(app, "OPTIONS", path, headers=preflight(APP, Host="evil.example"))

    assert answer.status == 400
    assert cors_of(answer.headers) == {}


async def test_an_answer_to_an_allowed_origin_names_it_and_exposes_the_session_id(app: Any, path: str) -> None:
    answer = await call(app, "POST", path, initialize(), {"Origin": APP})

    assert answer.status == 200
    assert answer.headers["mcp-session-id"]
    assert answer.headers["access-control-allow-origin"] == APP
    exposed = {name.strip() for name in answer.headers["access-control-expose-headers"].split(",")}
    assert {"Mcp-Session-Id", "WWW-Authenticate"} <= exposed
    assert "access-control-allow-credentials" not in answer.headers  # credentials are headers, never cookies


async def test_a_401_to_an_allowed_origin_lets_the_page_read_the_challenge(app: Any, path: str) -> None:
    body, headers = echo_call()

    answer = await call(app, "POST", path, body, {**headers, "Origin": APP, "Authorization": "Token nope"})

    assert answer.status == 401
    assert answer.headers["www-authenticate"].startswith('Bearer error="invalid_token"')
    assert answer.headers["access-control-allow-origin"] == APP


async def test_an_answer_to_another_origin_carries_no_cors_headers(app: Any, path: str) -> None:
    body, headers = echo_call()

    answer = await call(app, "POST", path, body, {**headers, "Origin": "https://evil.example"})

    assert answer.status == 403
    assert cors_of(answer.headers) == {}


async def test_an_options_request_without_origin_is_not_a_preflight(app: Any, path: str) -> None:
    answer = await call(app, "OPTIONS", path)

    assert answer.status == 405
    assert cors_of(answer.headers) == {}
