"""One structured record per tool call on the `mcp_django.calls` logger, with or without OpenTelemetry."""

from __future__ import annotations

import json
import logging

import pytest

from mcp_django.endpoints import Endpoint
from mcp_django.extensions import Extension
from mcp_django.telemetry import CallLogExtension, TelemetryExtension
from mcp_django.telemetry.calls import CALL_FIELDS
from mcp_django.testing import MCPCallError, MCPTestClient
from tests.telemetry.conftest import Telemetry
from tests.telemetry.tools import traced


def logged(extensions: list[Extension]) -> Endpoint:
    return Endpoint(
        "calls/mcp", name="calls", mode="server", registry=traced, allow_anonymous=True, extensions=extensions
    )


class JSONFormatter(logging.Formatter):
    """The formatter docs/observability.md shows: the message and the record's call facts, as one JSON object."""

    def format(self, record: logging.LogRecord) -> str:
        return json.dumps({"message": record.getMessage(), **{key: getattr(record, key) for key in CALL_FIELDS}})


def records(caplog: pytest.LogCaptureFixture) -> list[dict[str, object]]:
    formatter = JSONFormatter()
    return [json.loads(formatter.format(r)) for r in caplog.records if r.name == "mcp_django.calls"]


@pytest.mark.django_db
async def test_each_tool_call_is_one_record_with_its_endpoint_tool_user_outcome_and_duration(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="mcp_django.calls")
    client = MCPTestClient(logged([CallLogExtension()]), era="stateless")
    await client.call_tool("echo", {"text": "hi"})
    await client.call_tool("fails", {})
    await client.list_tools()

    ok, failed = records(caplog)
    assert isinstance(ok["duration_ms"], float)
    assert ok == {
        "message": f"tools/call echo on calls: ok in {ok['duration_ms']:.1f} ms",
        "endpoint": "calls",
        "tool": "echo",
        "user": None,
        "outcome": "ok",
        "duration_ms": ok["duration_ms"],
        "trace_id": None,
    }
    assert failed["tool"] == "fails"
    assert failed["outcome"] == "tool_error"


@pytest.mark.django_db
async def test_an_unknown_tool_is_logged_with_its_error_code(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="mcp_django.calls")
    client = MCPTestClient(logged([CallLogExtension()]), era="stateless")
    with pytest.raises(MCPCallError):
        await client.call_tool("nope", {})

    (record,) = records(caplog)
    assert record["outcome"] == "error -32602"


@pytest.mark.django_db
async def test_with_the_telemetry_extension_the_record_carries_the_calls_trace_id(
    caplog: pytest.LogCaptureFixture, telemetry: Telemetry
) -> None:
    caplog.set_level(logging.INFO, logger="mcp_django.calls")
    client = MCPTestClient(logged([CallLogExtension(), TelemetryExtension()]), era="stateless")
    await client.call_tool("echo", {"text": "hi"})

    (record,) = records(caplog)
    (span,) = telemetry.finished("tools/call")
    assert record["trace_id"] == f"{span.context.trace_id:032x}"


@pytest.mark.django_db
async def test_nothing_is_logged_while_the_logger_is_off(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="mcp_django.calls")
    await MCPTestClient(logged([CallLogExtension()]), era="stateless").call_tool("echo", {"text": "hi"})

    assert records(caplog) == []
