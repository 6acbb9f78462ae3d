"""The `MCPTask` model: one task of the tasks extension, its state, progress, result or error.

It belongs to the `mcp_django_tasks` app (`mcp_django.tasks`). It was the `mcp_django` app's until the
tasks extension became an app of its own; its table kept the name it had then (`mcp_django_mcptask`),
and the move was a state-only migration, so existing rows stay where they are.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models
from django.utils import timezone

__all__ = ["ACTIVE_STATUSES", "TERMINAL_STATUSES", "MCPApproval", "MCPTask"]


class MCPTask(models.Model):
    """A tool call running as a task (`io.modelcontextprotocol/tasks`), as every web and task worker sees it.

    The web process that accepted the call creates the row and enqueues it on Django's task framework;
    a task worker runs the tool and writes its progress, the input it waits for, and its result or
    error here; any web process answers `tasks/get`, `tasks/update` and `tasks/cancel` from the row.
    """

    class Status(models.TextChoices):
        WORKING = "working", "working"
        INPUT_REQUIRED = "input_required", "input required"
        COMPLETED = "completed", "completed"
        FAILED = "failed", "failed"
        CANCELLED = "cancelled", "cancelled"

    task_id = models.CharField(max_length=64, primary_key=True, verbose_name="task id")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="mcp_tasks",
        help_text="Who started the task; only they can see it. Empty for anonymous clients.",
    )
    endpoint = models.CharField(max_length=100, db_index=True, help_text="The endpoint the task was started on.")
    tool = models.CharField(max_length=128, db_index=True)
    arguments = models.JSONField(default=dict, blank=True)
    protocol_version = models.CharField(max_length=32)
    client_capabilities = models.JSONField(default=dict, blank=True)
    client_info = models.JSONField(null=True, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.WORKING, db_index=True)
    status_message = models.TextField(blank=True)
    progress = models.FloatField(null=True, blank=True)
    progress_total = models.FloatField(null=True, blank=True)
    input_requests = models.JSONField(
        default=dict, blank=True, help_text="The input requests the task waits for, by key."
    )
    answers = models.JSONField(default=dict, blank=True, help_text="The client's answers so far, by key.")
    trace_context = models.JSONField(
        default=dict, blank=True, help_text="The W3C trace context of the call that started it (traceparent, ...)."
    )
    result = models.JSONField(null=True, blank=True, help_text="The tool's CallToolResult once completed.")
    error = models.JSONField(null=True, blank=True, help_text="The JSON-RPC error once failed.")
    ttl_ms = models.PositiveBigIntegerField(null=True, blank=True)
    poll_interval_ms = models.PositiveIntegerField(null=True, blank=True)
    backend_task_id = models.CharField(
        max_length=64,
        blank=True,
        help_text="The id Django's task framework gave the job that runs it; empty while it waits its turn.",
    )
    client_address = models.CharField(
        max_length=64, blank=True, default="", help_text="The network address of the anonymous client that started it."
    )
    stored_bytes = models.PositiveBigIntegerField(
        default=0, help_text="The bytes its arguments, client data and result take (its caller's stored quota)."
    )
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        db_table = "mcp_django_mcptask"  # the table of the mcp_django app, where the model was first
        verbose_name = "MCP task"
        verbose_name_plural = "MCP tasks"
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.tool} {self.task_id} ({self.status})"

    @property
    def terminal(self) -> bool:
        """Whether the task has finished (completed, failed or cancelled)."""
        return self.status in TERMINAL_STATUSES

    def expired(self, now: Any = None) -> bool:
        """Whether the task's `ttlMs` has passed since it was created (it is then no longer reported)."""
        if self.ttl_ms is None:
            return False
        elapsed = (now or timezone.now()) - self.created_at
        return elapsed.total_seconds() * 1000 > self.ttl_ms


TERMINAL_STATUSES = frozenset({MCPTask.Status.COMPLETED, MCPTask.Status.FAILED, MCPTask.Status.CANCELLED})
ACTIVE_STATUSES = frozenset({MCPTask.Status.WORKING, MCPTask.Status.INPUT_REQUIRED})


class MCPApproval(models.Model):
    """A tool call waiting for (or past) a human's approval, and every step of it (docs/side-effects.md#approvals).

    Created with the task that answers the call (`mcp_django.tasks.approvals`). The row outlives its task
    (purged when its `ttlMs` passes): it is the approval's audit trail, `history` listing each step, who
    took it and when.
    """

    class State(models.TextChoices):
        PENDING = "pending", "pending"
        APPROVED = "approved", "approved"
        DENIED = "denied", "denied"
        EXPIRED = "expired", "expired"
        RAN = "ran", "ran"
        REFUSED = "refused", "refused (arguments changed)"
        WITHDRAWN = "withdrawn", "withdrawn (task cancelled)"

    task = models.OneToOneField(MCPTask, null=True, blank=True, on_delete=models.SET_NULL, related_name="approval")
    task_id_text = models.CharField(max_length=64, db_index=True, verbose_name="task id")
    endpoint = models.CharField(max_length=100)
    tool = models.CharField(max_length=128, db_index=True)
    permission = models.CharField(max_length=255, help_text="The Django permission an approver needs.")
    digest = models.CharField(
        max_length=64, help_text="SHA-256 of the tool name and arguments: the call runs only with these arguments."
    )
    preview = models.JSONField(default=dict, blank=True, help_text="What the approver is shown: the arguments, ...")
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    state = models.CharField(max_length=16, choices=State.choices, default=State.PENDING, db_index=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    reason = models.TextField(blank=True, help_text="Why it was denied, as the approver wrote it.")
    expires_at = models.DateTimeField(db_index=True)
    history = models.JSONField(default=list, blank=True, help_text="Every step: what, who, when.")
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        verbose_name = "MCP approval"
        verbose_name_plural = "MCP approvals"
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.tool} ({self.state})"
