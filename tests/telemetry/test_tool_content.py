"""Tool arguments and results are span attributes only when a setting opts in, and then redacted."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcp_django.telemetry import TelemetryExtension
from mcp_django.testing import MCPTestClient
from tests.telemetry.conftest import Telemetry
from tests.telemetry.tools import endpoint

SECRET = "write to ada@example.com or call +44 20 7946 0958"


def call_attributes(telemetry: Telemetry) -> dict[str, Any]:
    (span,) = telemetry.finished("tools/call")
    return dict(span.attributes or {})


@pytest.mark.django_db
async def test_by_default_no_span_carries_tool_arguments_or_results(telemetry: Telemetry) -> None:
    await MCPTestClient(endpoint(), era="stateless").call_tool("echo", {"text": SECRET})

    attributes = call_attributes(telemetry)
    assert "gen_ai.tool.call.arguments" not in attributes
    assert "gen_ai.tool.call.result" not in attributes
    assert not [value for value in attributes.values() if "ada@" in str(value)]


@pytest.mark.django_db
async def test_opted_in_the_arguments_and_result_are_recorded_after_the_redaction_rules(
    telemetry: Telemetry, settings: Any
) -> None:
    settings.MCP_DJANGO = {**settings.MCP_DJANGO, "TELEMETRY_TOOL_CONTENT": True}
    await MCPTestClient(endpoint(), era="stateless").call_tool("echo", {"text": SECRET})

    attributes = call_attributes(telemetry)
    redacted = "write to [REDACTED] or call [REDACTED]"
    assert json.loads(attributes["gen_ai.tool.call.arguments"]) == {"text": redacted}
    result = json.loads(attributes["gen_ai.tool.call.result"])
    assert result["content"] == [{"type": "text", "text": redacted}]


@pytest.mark.django_db
async def test_the_redaction_rules_are_a_setting_of_their_own(telemetry: Telemetry, settings: Any) -> None:
    rules = {"patterns": [r"ada@\S+"], "replacement": "<email>"}
    settings.MCP_DJANGO = {**settings.MCP_DJANGO, "TELEMETRY_TOOL_CONTENT": True, "TELEMETRY_REDACTION": rules}
    await MCPTestClient(endpoint(), era="stateless").call_tool("echo", {"text": SECRET})

    arguments = json.loads(call_attributes(telemetry)["gen_ai.tool.call.arguments"])
    assert arguments == {"text": "write to <email> or call +44 20 7946 0958"}


def test_settings_for_tool_content_that_are_wrong_are_check_e181(settings: Any) -> None:
    settings.MCP_DJANGO = {
        **settings.MCP_DJANGO,
        "TELEMETRY_TOOL_CONTENT": "yes",
        "TELEMETRY_REDACTION": {"patterns": ["(unclosed"]},
    }

    messages = [(m.id, m.msg, m.hint) for m in TelemetryExtension().check()]
    assert messages == [
        (
            "mcp_django_telemetry.E181",
            "TELEMETRY_TOOL_CONTENT must be True or False.",
            "Set it to True to record tool content.",
        ),
        (
            "mcp_django_telemetry.E181",
            "TELEMETRY_REDACTION is not valid redaction options.",
            "Fix it: '(unclosed' is not a regular expression: missing ), unterminated subpattern at position 0",
        ),
    ]


@pytest.mark.django_db
async def test_a_setting_that_is_wrong_records_nothing(telemetry: Telemetry, settings: Any) -> None:
    settings.MCP_DJANGO = {**settings.MCP_DJANGO, "TELEMETRY_TOOL_CONTENT": True, "TELEMETRY_REDACTION": {"x": 1}}
    await MCPTestClient(endpoint(), era="stateless").call_tool("echo", {"text": SECRET})

    assert "gen_ai.tool.call.arguments" not in call_attributes(telemetry)
