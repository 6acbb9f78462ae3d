"""System checks: one test per check ID, asserting the whole message."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.checks import Error, Warning
from django.test import override_settings

from mcp_django import Registry
from mcp_django.checks.declarations import check_registries
from mcp_django.checks.settings import check_settings


def run(value: Any) -> list[Any]:
    with override_settings(MCP_DJANGO=value):
        return check_settings()


def test_valid_settings_pass() -> None:
    assert (
        run(
            {
                "SERVER_INFO": {"name": "shop", "version": "2.0"},
                "INSTRUCTIONS": "Be brief.",
                "SESSIONS": False,
                "SESSION_IDLE_TIMEOUT": 600,
                "SESSION_STORE": "mcp_django.endpoints.sessions.DatabaseSessionStore",
                "MAX_REQUEST_BYTES": 1024,
                "ALLOWED_ORIGINS": ["https://app.example.com", "http://intranet:8080"],
                "PAGE_SIZE": 20,
                "CACHE_TTL": 0,
                "CACHE_SCOPE": "public",
                "STATIC_MODULE": "mcp_tools",
                "SCOPE_POLICY": "mcp_django.scopes.GroupScopePolicy",
                "AUTH_CACHE_TTL": 0,
                "DATABASE_THREADS": 2,
            }
        )
        == []
    )


def test_e001_settings_that_are_not_a_dict() -> None:
    assert run(["SESSIONS"]) == [
        Error(
            "MCP_DJANGO must be a dict, not list.",
            hint="Set MCP_DJANGO = {...} with the keys in docs/settings.md.",
            id="mcp_django.E001",
        )
    ]


def test_e002_an_unknown_key_suggests_the_closest_one() -> None:
    assert run({"SESION_STORE": "x"}) == [
        Error(
            "MCP_DJANGO has an unknown key 'SESION_STORE'.", hint="Did you mean 'SESSION_STORE'?", id="mcp_django.E002"
        )
    ]


def test_e002_an_unknown_key_with_nothing_close() -> None:
    assert run({"FROBNICATE": 1}) == [
        Error(
            "MCP_DJANGO has an unknown key 'FROBNICATE'.",
            hint="Remove it, or install what declares it. See docs/settings.md.",
            id="mcp_django.E002",
        )
    ]


def test_e003_an_import_string_that_does_not_import() -> None:
    assert run({"SESSION_STORE": "mcp_django.endpoints.sessions.NoSuchStore"}) == [
        Error(
            "MCP_DJANGO['SESSION_STORE'] cannot be imported.",
            hint="Check the dotted path 'mcp_django.endpoints.sessions.NoSuchStore'.",
            id="mcp_django.E003",
        )
    ]


def test_e003_an_import_string_that_is_not_a_string() -> None:
    assert run({"SESSION_STORE": 42}) == [
        Error(
            "MCP_DJANGO['SESSION_STORE'] must be a dotted import path, not int.",
            hint="Write it as a string, e.g. 'mcp_django.endpoints.sessions.DatabaseSessionStore'.",
            id="mcp_django.E003",
        )
    ]


@pytest.mark.parametrize(
    ("key", "value", "message", "shown"),
    [
        ("SESSIONS", "yes", "MCP_DJANGO['SESSIONS'] must be True or False.", "'yes'"),
        ("SESSION_IDLE_TIMEOUT", 0, "MCP_DJANGO['SESSION_IDLE_TIMEOUT'] must be a positive integer.", "0"),
        ("MAX_REQUEST_BYTES", -1, "MCP_DJANGO['MAX_REQUEST_BYTES'] must be a positive integer.", "-1"),
        ("MAX_REQUEST_BYTES", True, "MCP_DJANGO['MAX_REQUEST_BYTES'] must be a positive integer.", "True"),
        ("PAGE_SIZE", 2.5, "MCP_DJANGO['PAGE_SIZE'] must be a positive integer.", "2.5"),
        ("CACHE_TTL", -5, "MCP_DJANGO['CACHE_TTL'] must be a number of seconds >= 0.", "-5"),
        ("CACHE_SCOPE", "shared", "MCP_DJANGO['CACHE_SCOPE'] must be 'public' or 'private'.", "'shared'"),
        (
            "ALLOWED_ORIGINS",
            "https://app.example.com/and/more",
            "MCP_DJANGO['ALLOWED_ORIGINS'] must be a list of origins.",
            "'https://app.example.com/an...",
        ),
        ("SERVER_INFO", "shop", "MCP_DJANGO['SERVER_INFO'] must be a dict.", "'shop'"),
        ("INSTRUCTIONS", 3, "MCP_DJANGO['INSTRUCTIONS'] must be a string or None.", "3"),
        ("STATIC_MODULE", "my-tools", "MCP_DJANGO['STATIC_MODULE'] must be a module name or None.", "'my-tools'"),
        ("CLIENT_REQUEST_TIMEOUT", 0, "MCP_DJANGO['CLIENT_REQUEST_TIMEOUT'] must be a number > 0.", "0"),
        ("REQUEST_STATE_TTL", "10m", "MCP_DJANGO['REQUEST_STATE_TTL'] must be a positive integer.", "'10m'"),
        ("AUDIT_SPOOL_DIR", 3, "MCP_DJANGO['AUDIT_SPOOL_DIR'] must be a path or None.", "3"),
        ("AUDIT_SPOOL_DIR", "", "MCP_DJANGO['AUDIT_SPOOL_DIR'] must be a path or None.", "''"),
        ("AUDIT_SPOOL_MAX_BYTES", 0, "MCP_DJANGO['AUDIT_SPOOL_MAX_BYTES'] must be a positive integer.", "0"),
        ("AUDIT_WHEN_FULL", "block", "MCP_DJANGO['AUDIT_WHEN_FULL'] must be 'refuse' or 'drop'.", "'block'"),
        ("AUDIT_DB_TIMEOUT", 0, "MCP_DJANGO['AUDIT_DB_TIMEOUT'] must be a positive number of seconds.", "0"),
        (
            "AUDIT_REPLAY_INTERVAL",
            "5s",
            "MCP_DJANGO['AUDIT_REPLAY_INTERVAL'] must be a positive number of seconds.",
            "'5s'",
        ),
        ("DATABASE_THREADS", 0, "MCP_DJANGO['DATABASE_THREADS'] must be a positive integer.", "0"),
        ("DATABASE_THREADS", "8", "MCP_DJANGO['DATABASE_THREADS'] must be a positive integer.", "'8'"),
        ("AUTH_CACHE_TTL", -1, "MCP_DJANGO['AUTH_CACHE_TTL'] must be a number of seconds >= 0.", "-1"),
        ("AUTH_CACHE_TTL", None, "MCP_DJANGO['AUTH_CACHE_TTL'] must be a number of seconds >= 0.", "None"),
        (
            "REMOTE_MAX_MESSAGE_BYTES",
            "4 MiB",
            "MCP_DJANGO['REMOTE_MAX_MESSAGE_BYTES'] must be a positive integer.",
            "'4 MiB'",
        ),
        ("REMOTE_MAX_LIST_ITEMS", 0, "MCP_DJANGO['REMOTE_MAX_LIST_ITEMS'] must be a positive integer.", "0"),
        ("REMOTE_MAX_LIST_PAGES", None, "MCP_DJANGO['REMOTE_MAX_LIST_PAGES'] must be a positive integer.", "None"),
        (
            "REMOTE_MAX_DESCRIPTION_CHARS",
            -1,
            "MCP_DJANGO['REMOTE_MAX_DESCRIPTION_CHARS'] must be a positive integer.",
            "-1",
        ),
        ("REMOTE_MAX_INPUT_ROUNDS", 2.5, "MCP_DJANGO['REMOTE_MAX_INPUT_ROUNDS'] must be a positive integer.", "2.5"),
        (
            "REMOTE_CALL_TIMEOUT",
            None,
            "MCP_DJANGO['REMOTE_CALL_TIMEOUT'] must be a positive number of seconds.",
            "None",
        ),
    ],
)
def test_e004_a_value_of_the_wrong_type_or_range(key: str, value: Any, message: str, shown: str) -> None:
    assert run({key: value}) == [
        Error(message, hint=f"It is {shown}: fix it, or remove it to use the default.", id="mcp_django.E004")
    ]


def test_e004_messages_stay_under_80_characters() -> None:
    (error,) = run({"ALLOWED_ORIGINS": "x" * 500})

    assert len(error.msg) < 80


def test_e005_a_session_store_that_is_not_a_session_store() -> None:
    assert run({"SESSION_STORE": "collections.OrderedDict"}) == [
        Error(
            "MCP_DJANGO['SESSION_STORE'] is not a SessionStore subclass.",
            hint="Name a subclass of mcp_django.endpoints.sessions.SessionStore.",
            id="mcp_django.E005",
        )
    ]


def test_e003_a_scope_policy_that_does_not_import() -> None:
    assert run({"SCOPE_POLICY": "mcp_django.scopes.NoSuchPolicy"}) == [
        Error(
            "MCP_DJANGO['SCOPE_POLICY'] cannot be imported.",
            hint="Check the dotted path 'mcp_django.scopes.NoSuchPolicy'.",
            id="mcp_django.E003",
        )
    ]


def test_e003_a_scope_policy_that_is_not_a_string_names_the_default_as_an_example() -> None:
    assert run({"SCOPE_POLICY": 3}) == [
        Error(
            "MCP_DJANGO['SCOPE_POLICY'] must be a dotted import path, not int.",
            hint="Write it as a string, e.g. 'mcp_django.scopes.GroupScopePolicy'.",
            id="mcp_django.E003",
        )
    ]


def test_e005_a_scope_policy_that_is_not_a_scope_policy() -> None:
    assert run({"SCOPE_POLICY": "mcp_django.endpoints.sessions.DatabaseSessionStore"}) == [
        Error(
            "MCP_DJANGO['SCOPE_POLICY'] is not a ScopePolicy subclass.",
            hint="Name a subclass of mcp_django.scopes.ScopePolicy.",
            id="mcp_django.E005",
        )
    ]


def test_e006_server_info_without_name_and_version() -> None:
    assert run({"SERVER_INFO": {"name": "shop"}}) == [
        Error(
            "MCP_DJANGO['SERVER_INFO'] needs 'name' and 'version' strings.",
            hint='Use e.g. {"name": "my-server", "version": "1.0"}.',
            id="mcp_django.E006",
        )
    ]


@pytest.mark.parametrize("origin", ["app.example.com", "https://app.example.com/path", 7])
def test_e007_an_allowed_origin_that_is_not_an_origin(origin: Any) -> None:
    assert run({"ALLOWED_ORIGINS": [origin]}) == [
        Error(
            "MCP_DJANGO['ALLOWED_ORIGINS'] has an invalid origin.",
            hint=f"{origin!r} is not scheme://host[:port], e.g. 'https://app.example.com'.",
            id="mcp_django.E007",
        )
    ]


def test_w001_a_wildcard_origin() -> None:
    assert run({"ALLOWED_ORIGINS": ["*"]}) == [
        Warning(
            "MCP_DJANGO['ALLOWED_ORIGINS'] contains '*': any web page may call.",
            hint="List the origins that may call instead, e.g. 'https://app.example.com'.",
            id="mcp_django.W001",
        )
    ]


def test_e008_a_tool_name_mcp_rejects() -> None:
    registry = Registry("checks")

    @registry.tool(name="no spaces allowed")
    def bad() -> str:
        """Break the naming rules."""
        return ""

    errors = [error for error in check_registries() if error.obj is registry]

    assert errors == [
        Error(
            "tool name 'no spaces allowed' must be 1-128 characters of A-Z a-z 0-9 _ - .",
            hint="Rename or fix it in the 'checks' registry.",
            obj=registry,
            id="mcp_django.E008",
        )
    ]


def test_every_check_message_is_under_80_characters() -> None:
    messages = run(
        {
            "SESSION_STOR": 1,
            "SESSION_STORE": "a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t.u.v.w.x.y.z",
            "SERVER_INFO": {},
            "ALLOWED_ORIGINS": ["*", "https://a-very-long-host-name.example.com/with/a/path/in/it"],
            "CACHE_SCOPE": "x" * 100,
        }
    )

    assert {message.id for message in messages} == {
        "mcp_django.E002",
        "mcp_django.E003",
        "mcp_django.E004",
        "mcp_django.E006",
        "mcp_django.E007",
        "mcp_django.W001",
    }
    assert all(len(message.msg) < 80 for message in messages)
