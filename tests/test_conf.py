"""`mcp_settings`: defaults, user values, lazily imported strings, and reload on change."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.test import override_settings

import mcp_django
from mcp_django.conf import DEFAULTS, mcp_settings, normalize_origin
from mcp_django.sessions import DatabaseSessionStore


def test_every_key_has_its_default_when_unset() -> None:
    with override_settings(MCP_DJANGO={}):
        assert mcp_settings.SESSIONS is True
        assert mcp_settings.SESSION_IDLE_TIMEOUT == 3600
        assert mcp_settings.MAX_REQUEST_BYTES == 4 * 1024 * 1024
        assert mcp_settings.ALLOWED_ORIGINS == []
        assert mcp_settings.PAGE_SIZE == 100
        assert mcp_settings.CACHE_TTL_MS == 60_000
        assert mcp_settings.CACHE_SCOPE == "private"
        assert mcp_settings.STATIC_MODULE == "mcp"
        assert mcp_settings.INSTRUCTIONS is None


def test_the_default_server_info_names_the_package_version() -> None:
    with override_settings(MCP_DJANGO={}):
        assert {"name": "mcp-django", "version": mcp_django.__version__} == mcp_settings.SERVER_INFO


def test_user_values_win_over_defaults() -> None:
    with override_settings(MCP_DJANGO={"PAGE_SIZE": 7, "SESSIONS": False}):
        assert mcp_settings.PAGE_SIZE == 7
        assert mcp_settings.SESSIONS is False


def test_values_are_reloaded_when_the_setting_changes() -> None:
    with override_settings(MCP_DJANGO={"PAGE_SIZE": 7}):
        assert mcp_settings.PAGE_SIZE == 7
    with override_settings(MCP_DJANGO={"PAGE_SIZE": 9}):
        assert mcp_settings.PAGE_SIZE == 9


def test_import_strings_are_resolved_to_the_object() -> None:
    with override_settings(MCP_DJANGO={"SESSION_STORE": "mcp_django.sessions.DatabaseSessionStore"}):
        assert mcp_settings.SESSION_STORE is DatabaseSessionStore


def test_an_import_string_may_be_given_as_the_object_itself() -> None:
    with override_settings(MCP_DJANGO={"SESSION_STORE": DatabaseSessionStore}):
        assert mcp_settings.SESSION_STORE is DatabaseSessionStore


def test_an_unknown_attribute_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="Invalid MCP_DJANGO setting: 'NOPE'"):
        _ = mcp_settings.NOPE


def test_the_defaults_table_and_the_settings_reference_list_the_same_keys() -> None:
    reference = (Path(__file__).resolve().parents[1] / "docs" / "settings.md").read_text()
    documented = set(re.findall(r"^\| `([A-Z_]+)` \|", reference, flags=re.MULTILINE))
    assert documented == set(DEFAULTS)


@pytest.mark.parametrize(
    ("origin", "normalized"),
    [
        ("https://App.Example.com", "https://app.example.com"),
        ("https://app.example.com:443/", "https://app.example.com"),
        ("http://localhost:8000", "http://localhost:8000"),
        ("http://[::1]:3000", "http://[::1]:3000"),
        ("app.example.com", None),
        ("ftp://app.example.com", None),
        ("https://app.example.com/path", None),
        ("http://[::1", None),
    ],
)
def test_origins_are_normalized(origin: str, normalized: str | None) -> None:
    assert normalize_origin(origin) == normalized
