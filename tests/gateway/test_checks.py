"""The gateway's system checks: E030 (a GATEWAYS entry) and E031 (the backend a gateway endpoint names)."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.checks import Error

from mcp_django.checks import check_settings
from mcp_django.gateway.checks import check_gateways


def test_a_gateways_entry_with_a_mistake_is_e030(settings: Any) -> None:
    settings.MCP_DJANGO = {**settings.MCP_DJANGO, "GATEWAYS": {"github": {"URL": "ftp://x"}}}

    assert [m for m in check_gateways() if m.id == "mcp_django.E030"] == [
        Error(
            "MCP_DJANGO['GATEWAYS']['github']: URL must be an http:// or https:// URL.",
            hint="Give it a URL or a COMMAND, and only the keys docs/gateway.md lists.",
            id="mcp_django.E030",
        )
    ]


@pytest.mark.urls("tests.gateway.urls")
def test_a_gateway_endpoint_naming_no_entry_is_e031(settings: Any) -> None:
    settings.MCP_DJANGO = {**settings.MCP_DJANGO, "GATEWAYS": {"sdk": {"URL": "http://127.0.0.1:1/mcp"}}}

    assert check_gateways() == [
        Error(
            "Gateway endpoint 'gw-stdio''s backend: no MCP_DJANGO['GATEWAYS'] entry 'stdio'.",
            hint="Name a GATEWAYS entry, or pass a dict with a URL or a COMMAND.",
            id="mcp_django.E031",
        )
    ]


@pytest.mark.urls("tests.gateway.urls")
def test_gateways_that_resolve_pass_the_checks(settings: Any) -> None:
    settings.MCP_DJANGO = {
        **settings.MCP_DJANGO,
        "GATEWAYS": {"sdk": {"URL": "http://127.0.0.1:1/mcp"}, "stdio": {"COMMAND": ["server"]}},
    }

    assert check_gateways() == []


def test_gateway_timeouts_must_be_positive_numbers(settings: Any) -> None:
    settings.MCP_DJANGO = {**settings.MCP_DJANGO, "GATEWAY_READ_TIMEOUT": 0}

    assert [m for m in check_settings() if m.id == "mcp_django.E004"] == [
        Error(
            "MCP_DJANGO['GATEWAY_READ_TIMEOUT'] must be a positive number of seconds.",
            hint="It is 0: fix it, or remove it to use the default.",
            id="mcp_django.E004",
        )
    ]
