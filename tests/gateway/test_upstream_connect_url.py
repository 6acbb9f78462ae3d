"""Where a URL-mode elicitation sends a user to connect (`upstream.connect_url`): under the site the request
reached, else `SITE_URL` (stdio has no request), else nowhere (the caller gets the error naming the path)."""

from __future__ import annotations

from typing import Any

from mcp_django.gateway.upstream import connect_url


def test_the_connect_url_is_under_the_site_the_request_reached() -> None:
    assert (
        connect_url("accounts", "https://mcp.example.com/") == "https://mcp.example.com/mcp/upstream/?server=accounts"
    )


def test_without_a_request_site_the_connect_url_is_under_site_url(settings: Any) -> None:
    settings.MCP_DJANGO = {**settings.MCP_DJANGO, "SITE_URL": "https://intranet.example/"}

    assert connect_url("a b", None) == "https://intranet.example/mcp/upstream/?server=a+b"


def test_with_neither_there_is_no_connect_url_to_send_a_user_to() -> None:
    assert connect_url("accounts", None) is None


def test_a_site_url_that_is_not_a_url_is_a_check_error(settings: Any) -> None:
    from mcp_django.checks.settings import check_settings

    settings.MCP_DJANGO = {**settings.MCP_DJANGO, "SITE_URL": "example.com"}

    [error] = [message for message in check_settings(None) if message.id == "mcp_django.E004"]
    assert error.msg == "MCP_DJANGO['SITE_URL'] must be a URL."
