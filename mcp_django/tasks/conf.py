"""The `MCP_DJANGO` keys of the tasks extension (docs/tasks.md), read through `tasks_settings`.

Named on `MCPTasksConfig.mcp_settings`, so `manage.py check` accepts and checks them, and
`mcp_settings` answers for them too.
"""

from __future__ import annotations

from typing import Final

from mcp_django.checks.support import is_number, is_positive_int
from mcp_django.conf import MCPSettings, MiB, Rule

_OPTIONAL_COUNT: Final[Rule] = (lambda v: v is None or is_positive_int(v), "a positive integer or None")

tasks_settings: Final = MCPSettings(
    {
        # The backend of settings.TASKS that runs task tools, and the seconds their tasks advertise as
        # ttlMs and pollIntervalMs (checks mcp_django_tasks.E100, E102, E103).
        "TASK_BACKEND": "default",
        "TASK_TTL": 3600,
        "TASK_POLL_INTERVAL": 0.5,
        # What one caller can make the workers hold: active tasks per user and for all anonymous callers
        # together, seconds a task may run, bytes stored per task, and how often expired rows go.
        "TASK_MAX_ACTIVE_PER_USER": 20,
        "TASK_MAX_ACTIVE_ANONYMOUS": 20,
        "TASK_TIMEOUT": 900,
        "TASK_MAX_BYTES": MiB,
        "TASK_PURGE_INTERVAL": 300,
        # Fair shares: the tasks of one user (or one anonymous client address) handed to the workers at
        # once, the rest waiting their turn; and the bytes its tasks keep stored, finished ones included.
        "TASK_MAX_RUNNING_PER_USER": 2,
        "TASK_MAX_RUNNING_ANONYMOUS": 2,
        "TASK_MAX_STORED_BYTES_PER_USER": 32 * MiB,
        "TASK_MAX_STORED_BYTES_ANONYMOUS": 32 * MiB,
        # Approvals (docs/side-effects.md#approvals): seconds a call waits for its approver before it
        # expires, and the permission whose holders approve every tool annotated destructiveHint (None: only
        # the tools declared with approval= wait; check mcp_django_tasks.E104).
        "APPROVAL_TTL": 86400,
        "DESTRUCTIVE_TOOLS_APPROVAL": None,
    },
    owner="mcp_django.tasks",
    rules={
        "TASK_MAX_ACTIVE_PER_USER": _OPTIONAL_COUNT,
        "TASK_MAX_ACTIVE_ANONYMOUS": _OPTIONAL_COUNT,
        "TASK_TIMEOUT": (lambda v: v is None or (is_number(v) and v > 0), "a positive number of seconds or None"),
        "TASK_MAX_BYTES": (is_positive_int, "a positive integer"),
        "TASK_PURGE_INTERVAL": (lambda v: v is None or (is_number(v) and v >= 0), "a number >= 0 or None"),
        "TASK_MAX_RUNNING_PER_USER": _OPTIONAL_COUNT,
        "TASK_MAX_RUNNING_ANONYMOUS": _OPTIONAL_COUNT,
        "TASK_MAX_STORED_BYTES_PER_USER": _OPTIONAL_COUNT,
        "TASK_MAX_STORED_BYTES_ANONYMOUS": _OPTIONAL_COUNT,
        "APPROVAL_TTL": (lambda v: is_number(v) and v > 0, "a positive number of seconds"),
        "DESTRUCTIVE_TOOLS_APPROVAL": (
            lambda v: v is None or (isinstance(v, str) and v.count(".") == 1),
            "None or a permission, 'app_label.codename'",
        ),
    },
)
