"""The tasks app takes `MCPTask` over from the `mcp_django` app without touching the table or its rows."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from mcp_django.tasks.models import MCPTask

OLD_APP_STATE = ("mcp_django", "0013_mcp_task")
BEFORE: list[tuple[str, str | None]] = [OLD_APP_STATE, ("mcp_django_tasks", None)]
"""A database as the mcp_django app left it while the task model was its own."""


def _migrate(targets: list[tuple[str, str | None]]) -> MigrationExecutor:
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    return executor


@pytest.mark.django_db(transaction=True)
def test_migrating_forward_keeps_the_task_rows_and_the_permissions_on_tasks() -> None:
    view = Permission.objects.get(codename="view_mcptask")
    executor = _migrate(BEFORE)
    try:
        old_model = executor.loader.project_state(OLD_APP_STATE).apps.get_model("mcp_django", "MCPTask")
        old_model.objects.create(task_id="kept", endpoint="server", tool="slow_compute", protocol_version="2026-07-28")
        ContentType.objects.clear_cache()
        assert ContentType.objects.get(pk=view.content_type_id).app_label == "mcp_django"
    finally:
        executor = MigrationExecutor(connection)
        _migrate(executor.loader.graph.leaf_nodes())
        ContentType.objects.clear_cache()

    task = MCPTask.objects.get(pk="kept")
    assert (task.tool, task.status) == ("slow_compute", "working")
    assert MCPTask._meta.db_table == "mcp_django_mcptask"
    assert ContentType.objects.get(pk=view.content_type_id).app_label == "mcp_django_tasks"
    assert Permission.objects.get(pk=view.pk).content_type.model_class() is MCPTask
