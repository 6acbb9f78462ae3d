"""Handshake-era sessions over HTTP: minted on initialize, required after, bound to their endpoint."""

from __future__ import annotations

import json
import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client, override_settings

from mcp_django.endpoints.sessions import get_session_store
from mcp_django.models import MCPSession
from tests.http_support import error_of, initialize, open_session, post, request

pytestmark = [pytest.mark.urls("tests.http_urls"), pytest.mark.django_db]


def test_initialize_mints_a_visible_ascii_session_id_and_stores_the_session(client: Client) -> None:
    response = post(client, initialize())

    session_id = response["Mcp-Session-Id"]
    assert re.fullmatch(r"[\x21-\x7e]{32,}", session_id)
    row = MCPSession.objects.get(session_id=session_id)
    assert (row.endpoint_name, row.endpoint_path, row.protocol_version) == ("tests", "mcp", "2025-11-25")
    assert row.client_info == {"name": "tests", "version": "1.0"}
    assert row.principal is None
    assert row.initialized is False


def test_the_initialized_notification_is_saved(client: Client) -> None:
    session_id = open_session(client)

    assert MCPSession.objects.get(session_id=session_id).initialized is True


def test_a_session_is_reused_by_later_requests(client: Client) -> None:
    session = {"Mcp-Session-Id": open_session(client)}

    first = post(client, request("tools/list", id=1), session)
    second = post(client, request("ping", id=2), session)

    assert first.status_code == second.status_code == 200
    assert json.loads(second.content) == {"jsonrpc": "2.0", "id": 2, "result": {}}
    assert MCPSession.objects.count() == 1


def test_logging_set_level_is_saved_on_the_session(client: Client) -> None:
    session_id = open_session(client)

    post(client, request("logging/setLevel", {"level": "error"}), {"Mcp-Session-Id": session_id})

    assert MCPSession.objects.get(session_id=session_id).log_level == "error"


def test_a_request_without_session_id_is_400(client: Client) -> None:
    response = post(client, request("tools/list", id=4))

    assert response.status_code == 400
    assert json.loads(response.content)["id"] == 4
    assert error_of(response) == {"code": -32600, "message": "Bad Request: Missing session ID"}


def test_a_notification_without_session_id_is_400(client: Client) -> None:
    response = post(client, {"jsonrpc": "2.0", "method": "notifications/initialized"})

    assert response.status_code == 400


def test_an_unknown_session_id_is_404(client: Client) -> None:
    response = post(client, request("tools/list"), {"Mcp-Session-Id": "no-such-session"})

    assert response.status_code == 404
    assert error_of(response) == {"code": -32600, "message": "Session not found"}


def test_a_session_presented_on_another_endpoint_is_404(client: Client) -> None:
    session_id = open_session(client, path="/mcp")

    response = post(client, request("tools/list"), {"Mcp-Session-Id": session_id}, path="/other/mcp")

    assert response.status_code == 404


def test_a_session_presented_by_another_user_is_404(client: Client) -> None:
    user = get_user_model().objects.create_user("ada")
    client.force_login(user)
    session_id = open_session(client)
    assert MCPSession.objects.get(session_id=session_id).principal == user

    client.logout()
    response = post(client, request("tools/list"), {"Mcp-Session-Id": session_id})

    assert response.status_code == 404


def test_delete_ends_the_session_and_later_requests_are_404(client: Client) -> None:
    session = {"Mcp-Session-Id": open_session(client)}

    deleted = client.delete("/mcp", headers=session)
    after = post(client, request("tools/list"), session)

    assert deleted.status_code == 204
    assert after.status_code == 404
    assert not MCPSession.objects.exists()


def test_delete_without_session_id_is_400(client: Client) -> None:
    response = client.delete("/mcp")

    assert response.status_code == 400
    assert error_of(response)["message"] == "Bad Request: Missing session ID"


def test_delete_of_an_unknown_session_is_404(client: Client) -> None:
    assert client.delete("/mcp", headers={"Mcp-Session-Id": "nope"}).status_code == 404


def test_an_expired_session_is_404(client: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    session = {"Mcp-Session-Id": open_session(client)}
    store = get_session_store()
    later = store.clock() + 3601
    monkeypatch.setattr(store, "clock", lambda: later)

    response = post(client, request("tools/list"), session)

    assert response.status_code == 404
    assert not MCPSession.objects.exists()


def test_activity_pushes_expiry_forward(client: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    session = {"Mcp-Session-Id": open_session(client)}
    store = get_session_store()
    start = store.clock()
    for minutes in (50, 100):  # each step stays inside the hour-long idle timeout
        now = start + minutes * 60
        monkeypatch.setattr(store, "clock", lambda now=now: now)
        assert post(client, request("ping"), session).status_code == 200

    assert MCPSession.objects.get().expires_at.timestamp() == pytest.approx(start + 100 * 60 + 3600)


def test_a_failed_initialize_leaves_no_session(client: Client) -> None:
    bad = request("initialize", {"protocolVersion": 7, "capabilities": "none"})

    response = post(client, bad)

    assert "error" in json.loads(response.content)
    assert "Mcp-Session-Id" not in response
    assert not MCPSession.objects.exists()


@override_settings(MCP_DJANGO={"SESSIONS": False})
def test_with_sessions_off_nothing_is_minted_and_no_id_is_required(client: Client) -> None:
    init = post(client, initialize())
    listed = post(client, request("tools/list"))

    assert "Mcp-Session-Id" not in init
    assert listed.status_code == 200
    assert not MCPSession.objects.exists()


@override_settings(MCP_DJANGO={"SESSIONS": False})
def test_with_sessions_off_delete_is_405(client: Client) -> None:
    response = client.delete("/mcp", headers={"Mcp-Session-Id": "x"})

    assert response.status_code == 405
    assert response["Allow"] == "POST"


def test_an_endpoint_can_turn_sessions_off_by_itself(client: Client) -> None:
    init = post(client, initialize(), path="/stateless/mcp")

    assert init.status_code == 200
    assert "Mcp-Session-Id" not in init
    assert post(client, request("tools/list"), path="/stateless/mcp").status_code == 200
