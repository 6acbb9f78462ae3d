"""`mcp.server.session.duration` for a Streamable HTTP session, recorded when its client ends it with DELETE."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from tests.http_support import HANDSHAKE_VERSION, open_session
from tests.telemetry.conftest import Telemetry

HTTP_SESSION = {"network.transport": "tcp", "network.protocol.name": "http", "mcp.protocol.version": HANDSHAKE_VERSION}


def recorded(telemetry: Telemetry) -> int:
    points = telemetry.points("mcp.server.session.duration")
    return sum(count for attributes, count, _ in points if attributes == HTTP_SESSION)


@pytest.mark.django_db(transaction=True)
def test_an_http_session_its_client_deletes_records_its_duration(
    client: Client, telemetry: Telemetry, settings: Any
) -> None:
    settings.MCP_DJANGO = {**settings.MCP_DJANGO, "EXTENSIONS": ["mcp_django.telemetry.TelemetryExtension"]}
    before = recorded(telemetry)
    session_id = open_session(client, "/books/mcp")
    assert recorded(telemetry) == before  # still open

    response = client.delete("/books/mcp", headers={"Mcp-Session-Id": session_id})

    assert response.status_code < 300
    assert recorded(telemetry) == before + 1
    (total,) = [
        total for attributes, _, total in telemetry.points("mcp.server.session.duration") if attributes == HTTP_SESSION
    ]
    assert 0 <= total < 60
