"""The tasks extension's system checks (E100 to E104, W100 to W102).

Run as `TasksExtension.check()` by `mcp_django.extensions.check_extensions`. The backend checks run
only where some mounted endpoint declares a task tool, so a project without tasks hears nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.apps import AppConfig
from django.conf import settings
from django.core.checks import CheckMessage, Error, Warning
from django.db import router

from mcp_django.checks.support import is_number, setting, short
from mcp_django.endpoints import mounted_endpoints
from mcp_django.tasks.conf import tasks_settings
from mcp_django.tasks.worker import framework

_IN_REQUEST_BACKENDS = ("ImmediateBackend", "DummyBackend")
"""Backends with no worker: Immediate runs a task inside the request, Dummy never runs it."""


def check_tasks(app_configs: Iterable[AppConfig] | None = None, **kwargs: Any) -> list[CheckMessage]:
    """Check the tasks settings (E102, E103), the approvals' permissions (E104, W102) and, where task tools are
    served, the framework and backend."""
    messages = [*_check_values(), *_check_approvals()]
    try:
        tools = _task_tools()
    except Exception:  # a broken URLconf: check_endpoints and Django's URL checks report it
        return messages
    if not tools:
        return messages
    tasks = framework()
    if tasks is None:
        return [
            *messages,
            Error(
                f"Tools run as tasks ({', '.join(tools[:3])}), but no task framework is installed.",
                hint="On Django 5.2, pip install django-tasks django-tasks-db (the tasks extra); see docs/tasks.md.",
                id="mcp_django_tasks.E101",
            ),
        ]
    alias = tasks_settings.TASK_BACKEND
    try:
        backend = tasks.task_backends[alias]
    except Exception:
        return [
            *messages,
            Error(
                f"{setting('TASK_BACKEND')} names no backend of settings.TASKS: {short(alias)}.",
                hint="Name a key of settings.TASKS (docs/tasks.md sets up django_tasks_db's DatabaseBackend).",
                id="mcp_django_tasks.E100",
            ),
        ]
    if type(backend).__name__ in _IN_REQUEST_BACKENDS:
        messages.append(
            Warning(
                f"Task backend {alias!r} ({type(backend).__name__}) runs tasks in no worker.",
                hint="Use django_tasks_db.DatabaseBackend and run manage.py db_worker (docs/tasks.md).",
                id="mcp_django_tasks.W100",
            )
        )
    return [*messages, *_check_sqlite()]


def _check_sqlite() -> list[CheckMessage]:
    """W101: tasks on SQLite whose transactions start deferred.

    Web processes and task workers write the same `MCPTask` rows. A deferred SQLite transaction that
    reads a row and then writes it fails at once with "database is locked" when another connection has
    written in between (SQLite's busy timeout does not apply to it), and the task then ends failed.
    `transaction_mode: "IMMEDIATE"` takes the write lock when the transaction begins, where the timeout
    applies.
    """
    from mcp_django.tasks.models import MCPTask

    alias = router.db_for_write(MCPTask)
    database = settings.DATABASES.get(alias, {})
    if "sqlite3" not in str(database.get("ENGINE", "")):
        return []
    mode = (database.get("OPTIONS") or {}).get("transaction_mode")
    if str(mode).upper() in ("IMMEDIATE", "EXCLUSIVE"):
        return []
    return [
        Warning(
            f"Tasks are stored in SQLite database {alias!r}, whose transactions start deferred.",
            hint=f"Set DATABASES[{alias!r}]['OPTIONS']['transaction_mode'] = 'IMMEDIATE': task workers and "
            "web processes write the same rows, and a deferred transaction fails at once with "
            "'database is locked' (docs/tasks.md).",
            id="mcp_django_tasks.W101",
        )
    ]


def _check_values() -> list[CheckMessage]:
    messages: list[CheckMessage] = []
    ttl = tasks_settings.TASK_TTL
    if ttl is not None and not _positive_number(ttl):
        messages.append(
            Error(
                f"{setting('TASK_TTL')} must be a positive number of seconds or None.",
                hint=f"It is {short(ttl)}: seconds a task stays readable, or None for no limit.",
                id="mcp_django_tasks.E102",
            )
        )
    interval = tasks_settings.TASK_POLL_INTERVAL
    if not _positive_number(interval):
        messages.append(
            Error(
                f"{setting('TASK_POLL_INTERVAL')} must be a positive number of seconds.",
                hint=f"It is {short(interval)}: the seconds clients are asked to wait between polls.",
                id="mcp_django_tasks.E103",
            )
        )
    return messages


def _approval_permissions() -> dict[str, str]:
    """`{permission: who names it}` for every approval a mounted endpoint's tool needs, and the setting's."""
    from mcp_django.tasks.methods import served_tools

    named: dict[str, str] = {}
    setting_value = tasks_settings.DESTRUCTIVE_TOOLS_APPROVAL
    if isinstance(setting_value, str):
        named[setting_value] = "DESTRUCTIVE_TOOLS_APPROVAL"
    try:
        endpoints = mounted_endpoints()
    except Exception:  # a broken URLconf: Django's URL checks report it
        return named
    for endpoint in endpoints:
        for name, tool in served_tools(endpoint).items():
            if tool.approval is not None:
                named.setdefault(tool.approval.permission, f"tool {name!r}")
    return named


def _check_approvals() -> list[CheckMessage]:
    """E104: an approval naming a permission that does not exist (no approver could ever hold it);
    W102: one no model declares, where the database cannot be read to confirm it."""
    from mcp_django.permissions import declared_by_models, in_database

    named = _approval_permissions()
    unknown = set(named) - declared_by_models()
    if not unknown:
        return []
    rows = in_database(unknown)
    messages: list[CheckMessage] = []
    for permission in sorted(unknown):
        if rows is not None and permission in rows:
            continue
        owner = named[permission] if len(named[permission]) <= 30 else f"{named[permission][:27]}..."
        if rows is None:
            messages.append(
                Warning(
                    f"{owner}: approval permission {short(permission, 24)} is not confirmed.",
                    hint="No model declares it and the database could not be read: run migrate, then check.",
                    id="mcp_django_tasks.W102",
                )
            )
        else:
            messages.append(
                Error(
                    f"{owner}: approval needs unknown permission {short(permission, 24)}.",
                    hint="Name an existing permission, 'app_label.codename', that approvers hold.",
                    id="mcp_django_tasks.E104",
                )
            )
    return messages


def _positive_number(value: Any) -> bool:
    return is_number(value) and value > 0


def _task_tools() -> list[str]:
    """The task tools of the mounted endpoints' registries, by name."""
    names: list[str] = []
    for endpoint in mounted_endpoints():
        registry = endpoint.registry
        if registry is not None:
            names += [name for name, tool in registry.tools.items() if tool.task and name not in names]
    return names
