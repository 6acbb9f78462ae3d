"""A task started by a call: the worker's run of it joins the call's trace (the tasks extension, in process)."""

from __future__ import annotations

from typing import Any

import pytest
from opentelemetry.trace import SpanKind, StatusCode

from tests.tasks.test_tasks import client, run_worker
from tests.telemetry.conftest import Telemetry

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _installed(settings: Any) -> None:
    settings.MCP_DJANGO = {
        **settings.MCP_DJANGO,
        "EXTENSIONS": [*settings.MCP_DJANGO.get("EXTENSIONS", []), "mcp_django.telemetry.TelemetryExtension"],
    }


async def test_the_workers_run_of_a_task_is_a_span_under_the_call_that_started_it(telemetry: Telemetry) -> None:
    created = await client().call_tool("slow_compute", {"seconds": 0, "label": "quick"})
    assert created["resultType"] == "task"
    await run_worker(created["taskId"])

    call, run = [span for span in telemetry.finished("tools/call slow_compute") if span.kind is SpanKind.SERVER]
    assert run.parent is not None
    assert run.parent.span_id == call.context.span_id
    assert run.context.trace_id == call.context.trace_id
    assert run.attributes is not None
    assert "jsonrpc.request.id" not in run.attributes  # nobody waits for an answer to the run
    assert run.attributes["gen_ai.tool.name"] == "slow_compute"
    assert run.status.status_code is StatusCode.UNSET


async def test_a_task_that_fails_in_the_worker_marks_its_runs_span_failed(telemetry: Telemetry) -> None:
    created = await client().call_tool("failing_job", {})
    await run_worker(created["taskId"])

    run = [span for span in telemetry.finished("tools/call failing_job") if span.kind is SpanKind.SERVER][-1]
    assert run.status.status_code is StatusCode.ERROR
