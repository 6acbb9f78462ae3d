"""The telemetry extension: served without being advertised, and check E180 when the API is missing."""

from __future__ import annotations

import sys

import pytest

from mcp_django.telemetry import TelemetryExtension
from mcp_django.testing import MCPTestClient
from tests.telemetry.tools import endpoint


@pytest.mark.django_db
async def test_clients_are_not_told_about_telemetry() -> None:
    discovered = await MCPTestClient(endpoint(), era="stateless").request("server/discover")
    assert "mcp-django.dev/telemetry" not in discovered["capabilities"].get("extensions", {})
    initialized = await MCPTestClient(endpoint(), era="handshake").initialize()
    assert "mcp-django.dev/telemetry" not in initialized["capabilities"].get("experimental", {})


def test_without_opentelemetry_api_the_extension_is_check_e180_and_serves_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # As if the otel extra were not installed: importing opentelemetry fails.
    for name in [name for name in sys.modules if name == "opentelemetry" or name.startswith("opentelemetry.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "opentelemetry", None)

    extension = TelemetryExtension()
    assert [(m.id, m.msg, m.hint) for m in extension.check()] == [
        (
            "mcp_django.E180",
            "The telemetry extension needs opentelemetry-api, not installed.",
            "Install the otel extra: pip install 'django-mcp-host[otel]'.",
        )
    ]
    assert extension.capability(None) is None


def test_with_opentelemetry_api_the_extension_passes_its_check() -> None:
    assert TelemetryExtension().check() == []


NO_SDK = """
import asyncio, django
django.setup()
from opentelemetry import trace
from mcp_django.testing import MCPTestClient
from tests.telemetry.tools import endpoint, traced

@traced.tool
def trace_id() -> str:
    '''The trace the tool runs in.'''
    return format(trace.get_current_span().get_span_context().trace_id, "032x")

async def main():
    client = MCPTestClient(endpoint(interceptors=[]), era="stateless")  # no audit sink: no database here
    meta = {"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}
    sent = await client.request("tools/call", {"name": "trace_id", "arguments": {}, "_meta": meta})
    alone = await client.call_tool("trace_id")
    print(sent["content"][0]["text"], alone["content"][0]["text"])

asyncio.run(main())
"""


def test_with_no_sdk_configured_the_clients_trace_context_still_reaches_the_tool() -> None:
    """The API alone records nothing, but carries the client's context on (to a gateway's backend, say)."""
    import os
    import subprocess

    from tests.conftest import ROOT

    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "example_project.settings"}
    done = subprocess.run(
        [sys.executable, "-c", NO_SDK], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["4bf92f3577b34da6a3ce929d0e0e4736", "0" * 32]
