"""Resource subscriptions through the round-robin (tests/live/test_subscriptions_live.py): scope applies to
them whichever worker answers.

Left out: `test_a_subscription_survives_kill_9_and_a_restart`, about one daphne killed and started again
on its own SQLite copy; a worker killed behind the round-robin is tests/production/test_worker_killed.py.
Added: subscriptions made and dropped on alternating workers all reach the database.
"""

from __future__ import annotations

import pytest

from tests.http_support import request
from tests.live.admin_support import open_session
from tests.live.test_subscriptions_live import *  # the tests, collected here against the round-robin `example_server`
from tests.live.test_subscriptions_live import post, stored_subscriptions
from tests.production.site import RoundRobin

pytestmark = pytest.mark.production

del test_a_subscription_survives_kill_9_and_a_restart  # noqa: F821  # one process's crash (docstring)


def test_subscriptions_made_on_either_worker_all_stay(
    example_server: RoundRobin, live_server_env: dict[str, str]
) -> None:
    """Each worker caches the session for a few seconds: a subscription saved from its stale copy used to drop
    the one the other worker had just saved."""
    first, second = example_server.workers
    session = open_session(first, "carol", path="/mcp")
    assert post(second, request("ping", id=2), session, path="/mcp")["result"] == {}  # the second caches it too

    for number, (worker, uri) in enumerate([(first, "demo://books"), (second, "demo://books/1")], start=3):
        assert post(worker, request("resources/subscribe", {"uri": uri}, id=number), session, path="/mcp") == {
            "jsonrpc": "2.0",
            "id": number,
            "result": {},
        }
    unsubscribed = post(first, request("resources/unsubscribe", {"uri": "demo://books"}, id=5), session, path="/mcp")

    assert unsubscribed["result"] == {}
    assert stored_subscriptions(live_server_env, session["Mcp-Session-Id"]) == ["demo://books/1"]
