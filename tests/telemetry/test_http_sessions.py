"""`mcp.server.session.duration` for a Streamable HTTP session: ended with DELETE by its client, or expired."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client, override_settings

from mcp_django.endpoints.sessions import DatabaseSessionStore, ExpiredSession, SessionStore, sessions_expired
from mcp_django.protocol import SessionState
from mcp_django.telemetry import TelemetryExtension
from tests.http_support import HANDSHAKE_VERSION, open_session
from tests.telemetry.conftest import Telemetry

HTTP_SESSION = {"network.transport": "tcp", "network.protocol.name": "http", "mcp.protocol.version": HANDSHAKE_VERSION}


def recorded(telemetry: Telemetry) -> int:
    points = telemetry.points("mcp.server.session.duration")
    return sum(count for attributes, count, _ in points if attributes == HTTP_SESSION)


def total(telemetry: Telemetry) -> float:
    """The seconds recorded so far (cumulative: earlier tests' expired sessions are in it too)."""
    points = telemetry.points("mcp.server.session.duration")
    return sum(seconds for attributes, _, seconds in points if attributes == HTTP_SESSION)


@pytest.mark.django_db(transaction=True)
def test_an_http_session_its_client_deletes_records_its_duration(
    client: Client, telemetry: Telemetry, settings: Any
) -> None:
    settings.MCP_DJANGO = {**settings.MCP_DJANGO, "EXTENSIONS": ["mcp_django.telemetry.TelemetryExtension"]}
    before, seconds = recorded(telemetry), total(telemetry)
    session_id = open_session(client, "/books/mcp")
    assert recorded(telemetry) == before  # still open

    response = client.delete("/books/mcp", headers={"Mcp-Session-Id": session_id})

    assert response.status_code < 300
    assert recorded(telemetry) == before + 1
    assert 0 <= total(telemetry) - seconds < 60


class MovableClock(DatabaseSessionStore):
    """The database store, on a clock the test moves (it starts at the real time: rows' `created` is real)."""

    def __init__(self) -> None:
        super().__init__()
        self.now = time.time()

    def clock(self) -> float:
        return self.now


async def open_one(store: SessionStore) -> str:
    state = SessionState(protocol_version=HANDSHAKE_VERSION, changed=True)
    return await store.open(state, endpoint_name="api", endpoint_path="api", principal=None)


@pytest.fixture
def announced() -> Iterator[list[list[ExpiredSession]]]:
    """Each `sessions_expired` signal's sessions, as sent; the extension's receiver connected too."""
    TelemetryExtension().telemetry()
    sent: list[list[ExpiredSession]] = []

    def receiver(sender: Any, sessions: list[ExpiredSession], **kwargs: Any) -> None:
        sent.append(list(sessions))

    sessions_expired.connect(receiver, weak=False, dispatch_uid="tests.telemetry.announced")
    yield sent
    sessions_expired.disconnect(dispatch_uid="tests.telemetry.announced")


@pytest.mark.django_db(transaction=True)
@override_settings(MCP_DJANGO={"SESSION_IDLE_TIMEOUT": 10})
async def test_http_sessions_purged_once_expired_record_their_durations_from_one_read(
    telemetry: Telemetry, announced: list[list[ExpiredSession]]
) -> None:
    store = MovableClock()
    before = recorded(telemetry)
    for _ in range(3):
        await open_one(store)
    store.now += 20

    assert await store.clear_expired(store.now) == 3

    assert [len(sessions) for sessions in announced] == [3]  # one read of the rows, not one per session
    assert recorded(telemetry) == before + 3
    durations = [session.expired_at - session.opened_at for session in announced[0]]
    assert all(9 < duration < 11 for duration in durations)  # opened, then expired after the idle timeout


@pytest.mark.django_db(transaction=True)
@override_settings(MCP_DJANGO={"SESSION_IDLE_TIMEOUT": 10})
async def test_an_http_session_a_request_finds_expired_records_its_duration(
    telemetry: Telemetry, announced: list[list[ExpiredSession]]
) -> None:
    store = MovableClock()
    before = recorded(telemetry)
    session_id = await open_one(store)
    store.now += 20

    assert await store.resume(session_id, endpoint_name="api", principal=None) is None

    assert recorded(telemetry) == before + 1
    ((expired,),) = announced
    assert 9 < expired.expired_at - expired.opened_at < 11
