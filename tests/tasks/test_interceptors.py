"""The interceptor chain and the audit trail see the `tools/call` that starts a task."""

from __future__ import annotations

import pytest

import mcp_django
from mcp_django.endpoints import Endpoint
from mcp_django.models import ToolCallRecord
from mcp_django.tasks.methods import EXTENSION
from mcp_django.tasks.models import MCPTask
from mcp_django.testing import MCPTestClient

AUDIT = "mcp_django.interceptors.audit.AuditSinkInterceptor"
registry = mcp_django.Registry("tasks-audited")


@registry.tool(task="required")
async def archive(year: int) -> str:
    """Archives a year of orders.

    Args:
        year: the year to archive.
    """
    return f"archived {year}"


@pytest.mark.django_db(transaction=True)
async def test_the_audit_trail_records_the_call_that_starts_a_task() -> None:
    endpoint = Endpoint(
        "audited-tasks", registry=registry, name="audited-tasks", allow_anonymous=True, interceptors=[AUDIT]
    )
    mcp = MCPTestClient(endpoint, era="stateless", capabilities={"extensions": {EXTENSION: {}}})

    created = await mcp.call_tool("archive", {"year": 2025})

    assert created["resultType"] == "task"
    record = await ToolCallRecord.objects.aget()
    assert (record.tool, record.arguments, record.outcome, record.endpoint) == (
        "archive",
        {"year": 2025},
        "ok",
        "audited-tasks",
    )
    task = await MCPTask.objects.aget(pk=created["taskId"])
    assert (task.tool, task.arguments, task.endpoint) == ("archive", {"year": 2025}, "audited-tasks")
