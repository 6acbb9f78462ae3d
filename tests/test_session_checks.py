"""The session caps' system check (mcp_django.E060)."""

from __future__ import annotations

from django.core.checks import Error
from django.test import override_settings

from mcp_django.checks.settings import check_settings
from mcp_django.endpoints.sessions import SessionStore


class CannotCount(SessionStore):
    """A store with the four required methods' worth of contract, but no `count_open`."""


def test_capped_sessions_on_a_store_that_cannot_count_them_is_an_error() -> None:
    with override_settings(MCP_DJANGO={"SESSION_MAX_PER_USER": 3, "SESSION_STORE": CannotCount}):
        messages = check_settings()

    assert messages == [
        Error(
            "MCP_DJANGO['SESSION_STORE'] cannot count sessions, and they are capped.",
            hint="Implement count_open() on CannotCount, or unset SESSION_MAX_PER_USER/_ANONYMOUS.",
            id="mcp_django.E060",
        )
    ]


def test_capped_sessions_on_the_database_store_pass() -> None:
    with override_settings(MCP_DJANGO={"SESSION_MAX_PER_USER": 3, "SESSION_MAX_ANONYMOUS": 10}):
        assert check_settings() == []
