"""Resource subscriptions on a live daphne: scope applies to them, and they outlive a crash of the server."""

from __future__ import annotations

import json
import signal
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import LiveServer, serve_example
from tests.http_support import ACCEPT, request, stateless, stateless_headers
from tests.live.admin_support import open_session, private_env
from tests.live.database_support import server_database

pytestmark = pytest.mark.live

SYSTEM_RESOURCE = "demo://models"
"""Served on /mcp/adapter by the demo's SYSTEM provider: alice (USER) cannot read it."""


def post(server: LiveServer, body: Any, headers: dict[str, str], path: str = "/mcp/adapter") -> Any:
    data = json.dumps(body).encode()
    with urllib.request.urlopen(urllib.request.Request(server.url(path), data, headers), timeout=10) as response:
        text = response.read().decode()
    if response.headers.get("Content-Type", "").startswith("text/event-stream"):
        return [json.loads(line[len("data: ") :]) for line in text.splitlines() if line.startswith("data: ")][-1]
    return json.loads(text)


def test_alice_cannot_subscribe_to_a_system_resource(example_server: LiveServer) -> None:
    session = open_session(example_server, "alice")

    read = post(example_server, request("resources/read", {"uri": SYSTEM_RESOURCE}, id=2), session)
    subscribed = post(example_server, request("resources/subscribe", {"uri": SYSTEM_RESOURCE}, id=3), session)

    assert read["error"]["code"] == -32002
    assert subscribed["error"] == read["error"]


def test_carol_may_subscribe_to_it(example_server: LiveServer) -> None:
    session = open_session(example_server, "carol")

    subscribed = post(example_server, request("resources/subscribe", {"uri": SYSTEM_RESOURCE}, id=2), session)

    assert subscribed["result"] == {}


def test_a_listen_by_alice_is_not_acknowledged_for_a_system_resource(example_server: LiveServer) -> None:
    headers = {
        "Content-Type": "application/json",
        "Accept": ACCEPT,
        "Authorization": f"Bearer {example_server.tokens['alice']}",
        **stateless_headers("subscriptions/listen"),
    }
    body = stateless("subscriptions/listen", {"notifications": {"resourceSubscriptions": [SYSTEM_RESOURCE]}}, id=4)
    data = json.dumps(body).encode()
    request_ = urllib.request.Request(example_server.url("/mcp/adapter"), data, headers)
    with urllib.request.urlopen(request_, timeout=10) as response:
        first_event = b""
        while b"\n\n" not in first_event:  # the acknowledgement, then the stream stays open
            first_event += response.read1(65536)
    ack = json.loads(first_event.decode().split("data: ", 1)[1].split("\n", 1)[0])

    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert ack["params"]["notifications"] == {}


def stored_subscriptions(env: dict[str, str], session_id: str) -> list[str]:
    """The subscriptions the database holds for a session (what a restarted worker starts from)."""
    with server_database(env) as database:
        (row,) = database.rows(
            "SELECT CAST(subscriptions AS TEXT) FROM mcp_django_mcpsession WHERE session_id = ?", (session_id,)
        )
    return list(json.loads(row[0]))


def test_a_subscription_survives_kill_9_and_a_restart(live_server_env: dict[str, str], tmp_path: Path) -> None:
    env = private_env(live_server_env, tmp_path)
    with serve_example(env, tmp_path) as before:
        session = open_session(before, "carol")
        subscribed = post(before, request("resources/subscribe", {"uri": SYSTEM_RESOURCE}, id=2), session)
        before.process.send_signal(signal.SIGKILL)
        before.process.wait(timeout=30)
    stored_at_the_crash = stored_subscriptions(env, session["Mcp-Session-Id"])

    with serve_example(env, tmp_path) as after:
        pinged = post(after, request("ping", id=3), session)
        unsubscribed = post(after, request("resources/unsubscribe", {"uri": SYSTEM_RESOURCE}, id=4), session)

    assert subscribed["result"] == {}
    assert stored_at_the_crash == [SYSTEM_RESOURCE]
    assert pinged["result"] == {}  # the session itself lives in the database
    assert unsubscribed["result"] == {}
    # After kill -9 the restarted worker found the subscription in the database, and unsubscribing saved its removal.
    assert stored_subscriptions(env, session["Mcp-Session-Id"]) == []
