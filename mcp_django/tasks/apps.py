"""The Django app of the tasks extension: `"mcp_django.tasks"` in `INSTALLED_APPS`, after `"mcp_django"`."""

from __future__ import annotations

from django.apps import AppConfig


class MCPTasksConfig(AppConfig):
    """Installs the tasks extension (`TasksExtension`) and holds its `MCPTask` model, admin and migrations."""

    name = "mcp_django.tasks"
    label = "mcp_django_tasks"
    verbose_name = "MCP tasks"
    default_auto_field = "django.db.models.BigAutoField"
    mcp_extensions = ["mcp_django.tasks.extension.TasksExtension"]
    mcp_settings = ["mcp_django.tasks.conf.tasks_settings"]
