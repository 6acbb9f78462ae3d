"""`mcp_settings`: defaults, user values, lazily imported strings, and reload on change."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.test import override_settings

import mcp_django
from mcp_django.catalogues.conf import catalogue_settings
from mcp_django.checks.settings import settings_owners
from mcp_django.client.conf import client_settings
from mcp_django.conf import DEFAULTS, declared_settings, mcp_settings, normalize_origin
from mcp_django.discovery.conf import discovery_settings
from mcp_django.endpoints.sessions import DatabaseSessionStore
from mcp_django.events.conf import events_settings
from mcp_django.oauth.conf import oauth_settings
from mcp_django.skills.conf import skills_settings
from mcp_django.tasks.conf import tasks_settings
from mcp_django.telemetry.conf import telemetry_settings


def test_every_key_has_its_default_when_unset() -> None:
    with override_settings(MCP_DJANGO={}):
        assert mcp_settings.SESSIONS is True
        assert mcp_settings.SESSION_IDLE_TIMEOUT == 3600
        assert mcp_settings.MAX_REQUEST_BYTES == 4 * 1024 * 1024
        assert mcp_settings.ALLOWED_ORIGINS == []
        assert mcp_settings.PAGE_SIZE == 100
        assert mcp_settings.CACHE_TTL == 60
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
    with override_settings(MCP_DJANGO={"SESSION_STORE": "mcp_django.endpoints.sessions.DatabaseSessionStore"}):
        assert mcp_settings.SESSION_STORE is DatabaseSessionStore


def test_an_import_string_may_be_given_as_the_object_itself() -> None:
    with override_settings(MCP_DJANGO={"SESSION_STORE": DatabaseSessionStore}):
        assert mcp_settings.SESSION_STORE is DatabaseSessionStore


def test_an_unknown_attribute_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="Invalid MCP_DJANGO setting: 'NOPE'"):
        _ = mcp_settings.NOPE


def _documented_by_owner() -> dict[str, set[str]]:
    """The keys docs/settings.md lists, by the owner its section names (`## Tasks: `mcp_django.tasks``)."""
    documented: dict[str, set[str]] = {}
    owner = ""
    for line in (Path(__file__).resolve().parents[1] / "docs" / "settings.md").read_text().splitlines():
        if heading := re.match(r"^## .*`([a-z_.]+)`$", line):
            owner = heading.group(1)
        elif row := re.match(r"^\| `([A-Z_]+)` \|", line):
            documented.setdefault(owner, set()).add(row.group(1))
    return documented


def test_the_settings_reference_lists_every_key_under_its_owner() -> None:
    owners = [mcp_settings, client_settings, tasks_settings, oauth_settings, skills_settings, telemetry_settings]
    owners += [discovery_settings, events_settings, catalogue_settings]

    assert _documented_by_owner() == {owner.owner: set(owner.defaults) for owner in owners}
    assert set(mcp_settings.defaults) == set(DEFAULTS)


def test_every_owner_of_the_package_is_found_where_it_is_installed() -> None:
    # The test project installs the tasks, OAuth, discovery and events apps; the client ships with the core
    # app; Skills are named by an endpoint (found by the checks' settings_owners()); telemetry by a setting.
    assert {owner.owner for owner in declared_settings()} == {
        "mcp_django.client",
        "mcp_django.tasks",
        "mcp_django.oauth",
        "mcp_django.discovery",
        "mcp_django.events",
    }
    assert any(owner is skills_settings for owner in settings_owners())
    with override_settings(MCP_DJANGO={"EXTENSIONS": ["mcp_django.telemetry.TelemetryExtension"]}):
        assert any(owner is telemetry_settings for owner in declared_settings())
        assert mcp_settings.TELEMETRY_TOOL_CONTENT is False  # the core's settings answer for the owner's keys


def test_before_the_apps_are_ready_only_the_settings_extensions_are_asked_and_nothing_is_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from django.apps import apps

    with override_settings(MCP_DJANGO={"EXTENSIONS": ["mcp_django.telemetry.TelemetryExtension"]}):
        monkeypatch.setattr(apps, "apps_ready", False)
        assert declared_settings() == (telemetry_settings,)
        assert tasks_settings.TASK_TTL == 3600  # an owner reads its own keys without the app registry
        monkeypatch.setattr(apps, "apps_ready", True)
        assert any(owner is tasks_settings for owner in declared_settings())


def test_an_owners_keys_are_re_read_when_the_setting_changes() -> None:
    with override_settings(MCP_DJANGO={"TASK_TTL": 60}):
        assert tasks_settings.TASK_TTL == 60
        assert mcp_settings.TASK_TTL == 60
    with override_settings(MCP_DJANGO={}):
        assert tasks_settings.TASK_TTL == 3600
        assert mcp_settings.TASK_TTL == 3600


def test_a_key_no_installed_part_declares_is_an_attribute_error_on_the_core_settings() -> None:
    with pytest.raises(AttributeError, match="Invalid MCP_DJANGO setting: 'TELEMETRY_TOOL_CONTENT'"):
        _ = mcp_settings.TELEMETRY_TOOL_CONTENT


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
