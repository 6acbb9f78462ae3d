"""The checks of servers that sign each user in with OAuth (`"AUTH": "oauth"`): E165 to E169, W165 and W166."""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest
from django.core.checks import CheckMessage, Error, Warning

from mcp_django.client.config import UpstreamOAuth
from mcp_django.client.servers import server_config
from mcp_django.gateway.upstream_checks import check_upstream_oauth

pytestmark = pytest.mark.urls("tests.gateway.upstream_urls")


def checked(settings: Any, **entry: Any) -> list[CheckMessage]:
    settings.MCP_DJANGO = {**settings.MCP_DJANGO, "SERVERS": {"gh": entry}}
    return check_upstream_oauth()


def test_a_well_formed_oauth_entry_passes_and_becomes_the_servers_oauth_settings(settings: Any) -> None:
    auth = {"TYPE": "oauth", "CLIENT_ID": "site", "CLIENT_SECRET": "s3", "SCOPES": ["repo", "read:org"]}

    assert checked(settings, URL="https://mcp.example.com/mcp", AUTH=auth) == []
    assert server_config("gh").oauth == UpstreamOAuth("site", "s3", ("repo", "read:org"))
    assert checked(settings, URL="https://mcp.example.com/mcp", AUTH="oauth") == []


def test_an_auth_that_is_not_oauth_is_e165(settings: Any) -> None:
    assert checked(settings, URL="https://mcp.example.com/mcp", AUTH={"TYPE": "oauth", "CLIENT": "x"}) == [
        Error(
            "MCP_DJANGO['SERVERS']['gh'] AUTH is not 'oauth' nor an OAuth dict.",
            hint="Say 'oauth', or {'TYPE': 'oauth', 'CLIENT_ID': ..., 'SCOPES': [...]} (docs/federation.md).",
            id="mcp_django_gateway.E165",
        )
    ]


def test_oauth_on_a_stdio_server_is_e166(settings: Any) -> None:
    assert checked(settings, COMMAND=["python", "server.py"], AUTH="oauth") == [
        Error(
            "MCP_DJANGO['SERVERS']['gh'] AUTH 'oauth' is for HTTP servers only.",
            hint="Per-user OAuth needs a URL: a stdio server has no authorization server.",
            id="mcp_django_gateway.E166",
        )
    ]


def test_oauth_beside_a_token_or_an_authorization_header_is_e167(settings: Any) -> None:
    expected = [
        Error(
            "MCP_DJANGO['SERVERS']['gh'] has AUTH 'oauth' and a TOKEN of its own.",
            hint="Remove TOKEN and the Authorization header: each user's own token is sent instead.",
            id="mcp_django_gateway.E167",
        )
    ]
    assert checked(settings, URL="https://mcp.example.com/mcp", AUTH="oauth", TOKEN="shared") == expected
    headers = {"authorization": "Bearer shared"}
    assert checked(settings, URL="https://mcp.example.com/mcp", AUTH="oauth", HEADERS=headers) == expected


@pytest.mark.parametrize(
    "auth",
    [
        {"TYPE": "oauth", "CLIENT_SECRET": "a secret without an id"},
        {"TYPE": "oauth", "CLIENT_ID": 7},
        {"TYPE": "oauth", "SCOPES": "repo"},
        {"TYPE": "oauth", "SCOPES": ["two words"]},
    ],
)
def test_a_bad_client_id_secret_or_scopes_is_e168(settings: Any, auth: dict[str, Any]) -> None:
    assert checked(settings, URL="https://mcp.example.com/mcp", AUTH=auth) == [
        Error(
            "MCP_DJANGO['SERVERS']['gh'] AUTH has a bad CLIENT_ID, CLIENT_SECRET or SCOPES.",
            hint="CLIENT_ID and CLIENT_SECRET are strings (a secret needs an id); SCOPES a list of words.",
            id="mcp_django_gateway.E168",
        )
    ]


def test_oauth_without_authlib_is_e169(settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "authlib" else real(name, *a))

    assert checked(settings, URL="https://mcp.example.com/mcp", AUTH="oauth") == [
        Error(
            "AUTH 'oauth' servers need Authlib, not installed.",
            hint="Install the extra: pip install 'django-mcp-host[upstream]'.",
            id="mcp_django_gateway.E169",
        )
    ]


def test_users_tokens_over_plain_http_to_another_host_are_w165(settings: Any) -> None:
    assert checked(settings, URL="http://127.0.0.1:8001/mcp", AUTH="oauth") == []  # loopback: a test or a sidecar
    assert checked(settings, URL="http://mcp.example.com/mcp", AUTH="oauth") == [
        Warning(
            "MCP_DJANGO['SERVERS']['gh'] sends users' tokens over plain http.",
            hint="Use https: the users' tokens would cross the network in the clear.",
            id="mcp_django_gateway.W165",
        )
    ]


@pytest.mark.urls("tests.http_urls")
def test_oauth_servers_without_the_connect_page_in_the_urlconf_are_w166(settings: Any) -> None:
    assert checked(settings, URL="https://mcp.example.com/mcp", AUTH="oauth") == [
        Warning(
            "AUTH 'oauth' servers but no connect page.",
            hint="Include mcp_django.urls: users connect their accounts at its mcp/upstream/ page.",
            id="mcp_django_gateway.W166",
        )
    ]
