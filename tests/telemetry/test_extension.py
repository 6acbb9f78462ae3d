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
