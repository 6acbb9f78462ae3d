"""The interceptor servers' system checks: one test per check ID, asserting the whole message."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.checks import Error, Warning
from django.test import override_settings

from mcp_django.gateway.interceptor_checks import check_interceptor_servers

pytestmark = pytest.mark.urls("tests.admin_urls")  # an endpoint without a list of its own

HINT = "Give URL or COMMAND, and optional HEADERS, TOKEN, FAIL_OPEN, TIMEOUT (docs/gateway.md)."


def run(**values: Any) -> list[Any]:
    with override_settings(MCP_DJANGO={"INTERCEPTORS": [], **values}):
        return check_interceptor_servers()


def test_valid_servers_and_server_entries_pass() -> None:
    assert (
        run(
            SERVERS={
                "guard": {"URL": "https://guard.example/mcp", "TOKEN": "t", "FAIL_OPEN": True, "TIMEOUT": 0.5},
                "local": {"COMMAND": ["python", "-m", "guard"]},
            },
            INTERCEPTORS=[{"SERVER": "guard"}, {"SERVER": "*"}, {"SERVER": {"URL": "http://127.0.0.1:9000/mcp"}}],
        )
        == []
    )


def test_e040_servers_not_a_dict_of_names() -> None:
    assert run(SERVERS=["guard"]) == [
        Error(
            "MCP_DJANGO['SERVERS'] must be a dict of names to servers.",
            hint="Map each server's name to {'URL': ...} or {'COMMAND': [...]}.",
            id="mcp_django_gateway.E040",
        )
    ]


def test_e041_a_server_with_problems() -> None:
    assert run(SERVERS={"guard": {"URL": "ftp://x", "TIMEOUT": 0, "FAIL_OPEN": "yes"}}) == [
        Error(
            "MCP_DJANGO['SERVERS']['guard'] URL must be an http:// or https:// URL.",
            hint=HINT,
            id="mcp_django_gateway.E041",
        ),
        Error(
            "MCP_DJANGO['SERVERS']['guard'] FAIL_OPEN must be True or False.",
            hint=HINT,
            id="mcp_django_gateway.E041",
        ),
        Error(
            "MCP_DJANGO['SERVERS']['guard'] TIMEOUT must be a positive number of seconds.",
            hint=HINT,
            id="mcp_django_gateway.E041",
        ),
    ]


def test_e042_a_server_entry_with_other_keys_or_a_bad_server() -> None:
    assert run(INTERCEPTORS=[{"SERVER": "guard", "PRIORITY": 3}, {"SERVER": {"URL": "nope"}}]) == [
        Error(
            "MCP_DJANGO['INTERCEPTORS'][0] has keys besides SERVER.",
            hint="Set FAIL_OPEN and TIMEOUT on the server, in SERVERS.",
            id="mcp_django_gateway.E042",
        ),
        Error(
            "MCP_DJANGO['INTERCEPTORS'][1] SERVER URL must be an http:// or https:// URL.",
            hint=HINT,
            id="mcp_django_gateway.E042",
        ),
    ]


def test_w040_a_server_entry_naming_no_configured_server() -> None:
    assert run(INTERCEPTORS=[{"SERVER": "guard"}]) == [
        Warning(
            "MCP_DJANGO['INTERCEPTORS'][0] names no server of SERVERS.",
            hint="Add it to SERVERS, or as an MCP remote server in the admin.",
            id="mcp_django_gateway.W040",
        )
    ]
