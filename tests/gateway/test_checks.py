"""The gateway's system checks: E031 (the server a gateway endpoint names), W160 and W250."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.checks import Error, Warning
from django.test import override_settings

from mcp_django.checks.settings import check_settings
from mcp_django.gateway.checks import check_gateways, check_remote_call_timeout, check_remote_definitions


@pytest.mark.urls("tests.gateway.urls")
def test_a_gateway_endpoint_naming_no_entry_is_e031(settings: Any) -> None:
    settings.MCP_DJANGO = {**settings.MCP_DJANGO, "SERVERS": {"sdk": {"URL": "http://127.0.0.1:1/mcp"}}}

    assert check_gateways() == [
        Error(
            f"Gateway endpoint {name!r}'s server: no MCP_DJANGO['SERVERS'] entry 'stdio'.",
            hint="Name a SERVERS entry, or pass a dict with a URL or a COMMAND.",
            id="mcp_django_gateway.E031",
        )
        for name in ("gw-hub", "gw-stdio")
    ]


@pytest.mark.urls("tests.gateway.urls")
def test_gateways_that_resolve_pass_the_checks(settings: Any) -> None:
    settings.MCP_DJANGO = {
        **settings.MCP_DJANGO,
        "SERVERS": {"sdk": {"URL": "http://127.0.0.1:1/mcp"}, "stdio": {"COMMAND": ["server"]}},
    }

    assert check_gateways() == []


def test_gateway_timeouts_must_be_positive_numbers(settings: Any) -> None:
    settings.MCP_DJANGO = {**settings.MCP_DJANGO, "REMOTE_READ_TIMEOUT": 0}

    assert [m for m in check_settings() if m.id == "mcp_django.E004"] == [
        Error(
            "MCP_DJANGO['REMOTE_READ_TIMEOUT'] must be a positive number of seconds.",
            hint="It is 0: fix it, or remove it to use the default.",
            id="mcp_django.E004",
        )
    ]


def test_w160_a_remote_call_timeout_shorter_than_the_read_timeout() -> None:
    with override_settings(MCP_DJANGO={"REMOTE_CALL_TIMEOUT": 30}):
        assert check_remote_call_timeout() == [
            Warning(
                "MCP_DJANGO['REMOTE_CALL_TIMEOUT'] is shorter than REMOTE_READ_TIMEOUT.",
                hint="A forwarded call would end before its answer is due: raise it, or lower the other.",
                id="mcp_django_gateway.W160",
            )
        ]
    with override_settings(MCP_DJANGO={"REMOTE_CALL_TIMEOUT": 30, "REMOTE_READ_TIMEOUT": 30}):
        assert check_remote_call_timeout() == []


def test_w250_remote_definitions_trusted_with_servers_configured() -> None:
    with override_settings(MCP_DJANGO={"REMOTE_DEFINITIONS": "trust", "SERVERS": {"x": {"URL": "https://x/mcp"}}}):
        assert check_remote_definitions() == [
            Warning(
                "MCP_DJANGO['REMOTE_DEFINITIONS'] is 'trust': remote tool changes go unreviewed.",
                hint="Use 'pin' (the default): a changed definition then waits for an admin's approval.",
                id="mcp_django_gateway.W250",
            )
        ]
    with override_settings(MCP_DJANGO={"REMOTE_DEFINITIONS": "trust", "SERVERS": {}}):
        assert check_remote_definitions() == []
    with override_settings(MCP_DJANGO={"SERVERS": {"x": {"URL": "https://x/mcp"}}}):
        assert check_remote_definitions() == []
