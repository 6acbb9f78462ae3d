"""The tasks extension's system checks: E100, E102, E103 and W100 (the example project serves task tools)."""

from __future__ import annotations

from typing import Any

import django
from django.conf import settings
from django.core.checks import Error, Warning
from django.test import override_settings

from mcp_django.tasks.checks import check_tasks

FRAMEWORK = "django.tasks" if django.VERSION >= (6,) else "django_tasks"


def with_settings(**overrides: Any) -> Any:
    return override_settings(MCP_DJANGO={**settings.MCP_DJANGO, **overrides})


def test_the_example_project_passes() -> None:
    assert check_tasks() == []


def test_a_tasks_backend_that_is_not_in_settings_tasks_is_e100() -> None:
    with with_settings(TASKS_BACKEND="queue"):
        assert check_tasks() == [
            Error(
                "MCP_DJANGO['TASKS_BACKEND'] names no backend of settings.TASKS: 'queue'.",
                hint="Name a key of settings.TASKS (docs/tasks.md sets up django_tasks_db's DatabaseBackend).",
                id="mcp_django.E100",
            )
        ]


def test_a_bad_ttl_and_poll_interval_are_e102_and_e103() -> None:
    with with_settings(TASK_TTL_MS=0, TASK_POLL_INTERVAL_MS="fast"):
        assert check_tasks() == [
            Error(
                "MCP_DJANGO['TASK_TTL_MS'] must be a positive integer or None.",
                hint="It is 0: milliseconds a task stays readable, or None for no limit.",
                id="mcp_django.E102",
            ),
            Error(
                "MCP_DJANGO['TASK_POLL_INTERVAL_MS'] must be a positive integer.",
                hint="It is 'fast': the milliseconds clients are asked to wait between polls.",
                id="mcp_django.E103",
            ),
        ]
    with with_settings(TASK_TTL_MS=None):
        assert check_tasks() == []


def test_a_backend_without_workers_is_w100() -> None:
    immediate = {"default": {"BACKEND": f"{FRAMEWORK}.backends.immediate.ImmediateBackend"}}
    with override_settings(TASKS=immediate):
        assert check_tasks() == [
            Warning(
                "Task backend 'default' (ImmediateBackend) runs tasks in no worker.",
                hint="Use django_tasks_db.DatabaseBackend and run manage.py db_worker (docs/tasks.md).",
                id="mcp_django.W100",
            )
        ]
