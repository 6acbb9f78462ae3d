"""The tasks extension's system checks: E100, E102, E103, W100 and W101 (the example project serves task tools)."""

from __future__ import annotations

import copy
import sqlite3
import warnings
from pathlib import Path
from typing import Any

import django
import pytest
from django.conf import settings
from django.core.checks import Error, Warning
from django.db import OperationalError, connections
from django.db.backends.sqlite3.base import DatabaseWrapper
from django.test import override_settings

from mcp_django.tasks.checks import check_tasks

FRAMEWORK = "django.tasks" if django.VERSION >= (6,) else "django_tasks"


def with_settings(**overrides: Any) -> Any:
    return override_settings(MCP_DJANGO={**settings.MCP_DJANGO, **overrides})


def test_the_example_project_passes() -> None:
    assert check_tasks() == []


def test_a_tasks_backend_that_is_not_in_settings_tasks_is_e100() -> None:
    with with_settings(TASK_BACKEND="queue"):
        assert check_tasks() == [
            Error(
                "MCP_DJANGO['TASK_BACKEND'] names no backend of settings.TASKS: 'queue'.",
                hint="Name a key of settings.TASKS (docs/tasks.md sets up django_tasks_db's DatabaseBackend).",
                id="mcp_django_tasks.E100",
            )
        ]


def test_a_bad_ttl_and_poll_interval_are_e102_and_e103() -> None:
    with with_settings(TASK_TTL=0, TASK_POLL_INTERVAL="fast"):
        assert check_tasks() == [
            Error(
                "MCP_DJANGO['TASK_TTL'] must be a positive number of seconds or None.",
                hint="It is 0: seconds a task stays readable, or None for no limit.",
                id="mcp_django_tasks.E102",
            ),
            Error(
                "MCP_DJANGO['TASK_POLL_INTERVAL'] must be a positive number of seconds.",
                hint="It is 'fast': the seconds clients are asked to wait between polls.",
                id="mcp_django_tasks.E103",
            ),
        ]
    with with_settings(TASK_TTL=None):
        assert check_tasks() == []


def test_a_backend_without_workers_is_w100() -> None:
    immediate = {"default": {"BACKEND": f"{FRAMEWORK}.backends.immediate.ImmediateBackend"}}
    with override_settings(TASKS=immediate):
        assert check_tasks() == [
            Warning(
                "Task backend 'default' (ImmediateBackend) runs tasks in no worker.",
                hint="Use django_tasks_db.DatabaseBackend and run manage.py db_worker (docs/tasks.md).",
                id="mcp_django_tasks.W100",
            )
        ]


def databases(**options: Any) -> Any:
    """The example project's databases with the default's SQLite `OPTIONS` replaced."""
    changed = copy.deepcopy(settings.DATABASES)
    changed["default"]["OPTIONS"] = options
    warnings.filterwarnings("ignore", "Overriding setting DATABASES", UserWarning)
    return override_settings(DATABASES=changed)


def test_tasks_on_sqlite_with_deferred_transactions_are_w101() -> None:
    with databases(timeout=20):
        assert check_tasks() == [
            Warning(
                "Tasks are stored in SQLite database 'default', whose transactions start deferred.",
                hint="Set DATABASES['default']['OPTIONS']['transaction_mode'] = 'IMMEDIATE': task workers and "
                "web processes write the same rows, and a deferred transaction fails at once with "
                "'database is locked' (docs/tasks.md).",
                id="mcp_django_tasks.W101",
            )
        ]
    with databases(timeout=20, transaction_mode="IMMEDIATE"):
        assert check_tasks() == []


def sqlite_connection(path: Path, options: dict[str, Any]) -> DatabaseWrapper:
    """A connection of its own to the SQLite file `path`, with the default database's settings and `options`."""
    settings_dict = {**connections["default"].settings_dict, "NAME": str(path), "OPTIONS": options}
    return DatabaseWrapper(settings_dict, alias=f"w101-{id(options)}")


@pytest.mark.parametrize("mode", ["DEFERRED", "example"])
def test_a_task_row_read_then_written_while_a_worker_writes_it(
    tmp_path: Path, mode: str, django_db_blocker: Any
) -> None:
    """What W101 is about, on a real SQLite file in WAL mode: a transaction reads a task's row, another
    connection (the worker) commits a change to it, then the transaction writes. Deferred, the write
    fails at once with "database is locked"; with the example project's options the transaction holds
    the write lock from its start, so the worker's write waits for it instead (here: past its timeout)."""
    path = tmp_path / "tasks.sqlite3"
    with sqlite3.connect(path) as setup:
        setup.execute("PRAGMA journal_mode=WAL")
        setup.execute("CREATE TABLE task (id TEXT PRIMARY KEY, status TEXT)")
        setup.execute("INSERT INTO task VALUES ('t1', 'working')")
    options = {"timeout": 0.2} if mode == "DEFERRED" else {**settings.DATABASES["default"]["OPTIONS"], "timeout": 0.2}
    web, worker = sqlite_connection(path, options), sqlite_connection(path, {"timeout": 0.2})
    with django_db_blocker.unblock(), web.cursor() as cursor, worker.cursor() as other:
        web.set_autocommit(False, force_begin_transaction_with_broken_autocommit=True)  # as atomic() begins
        cursor.execute("SELECT status FROM task WHERE id = 't1'")
        if mode == "DEFERRED":
            other.execute("UPDATE task SET status = 'cancelled' WHERE id = 't1'")
            with pytest.raises(OperationalError, match="database is locked"):
                cursor.execute("UPDATE task SET status = 'input_required' WHERE id = 't1'")
        else:
            with pytest.raises(OperationalError, match="database is locked"):
                other.execute("UPDATE task SET status = 'cancelled' WHERE id = 't1'")
            cursor.execute("UPDATE task SET status = 'input_required' WHERE id = 't1'")
            web.commit()
            other.execute("SELECT status FROM task WHERE id = 't1'")
            assert other.fetchone() == ("input_required",)
    web.close()
    worker.close()
