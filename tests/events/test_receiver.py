"""The webhook receiver a project mounts (`mcp_django.events.receiver.WebhookReceiver`, the demo's /hooks/books):
it hands on what one of its secrets signed (Standard Webhooks, computed here independently), once, and refuses
the rest."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from django.conf import settings
from django.core.cache import cache
from django.test import Client

from example_project.demo.hooks import RECEIVED
from tests.events.receiver import OTHER_SECRET

OCCURRENCE = {"eventId": "evt_1", "name": "book.added", "timestamp": "2026-12-06T10:00:00Z", "data": {"id": 7}}


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    RECEIVED.clear()
    cache.clear()
    yield
    RECEIVED.clear()


def _signature(secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    key = base64.b64decode(secret.removeprefix("whsec_"))
    digest = hmac.new(key, f"{message_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def _deliver(
    message: dict[str, Any],
    *secrets: str,
    message_id: str = "evt_1",
    timestamp: int | None = None,
    body: bytes | None = None,
) -> Any:
    body = json.dumps(message).encode() if body is None else body
    stamp = int(time.time()) if timestamp is None else timestamp
    signature = " ".join(_signature(secret, message_id, stamp, body) for secret in secrets or (OTHER_SECRET,))
    headers = {"webhook-id": message_id, "webhook-timestamp": str(stamp), "webhook-signature": signature}
    return Client().post(
        "/hooks/books",
        body,
        content_type="application/json",
        headers={**headers, "X-MCP-Subscription-Id": "sub_1"},
    )


def test_a_delivery_signed_with_the_receivers_secret_is_handed_on_once() -> None:
    first = _deliver(OCCURRENCE, settings.DEMO_WEBHOOK_SECRET)
    retried = _deliver(OCCURRENCE, settings.DEMO_WEBHOOK_SECRET)

    assert (first.status_code, retried.status_code) == (204, 204)
    assert len(RECEIVED) == 1
    assert (RECEIVED[0].message_id, RECEIVED[0].subscription_id, RECEIVED[0].data) == ("evt_1", "sub_1", {"id": 7})


def test_a_delivery_signed_with_another_secret_too_during_a_rotation_is_accepted() -> None:
    assert _deliver(OCCURRENCE, OTHER_SECRET, settings.DEMO_WEBHOOK_SECRET).status_code == 204
    assert len(RECEIVED) == 1


@pytest.mark.parametrize(
    "forgery",
    ["another secret", "a changed body", "an old timestamp", "a timestamp in the future", "no signature"],
)
def test_a_forged_or_replayed_delivery_is_refused_and_not_handed_on(forgery: str) -> None:
    secret = settings.DEMO_WEBHOOK_SECRET
    body = json.dumps(OCCURRENCE).encode()
    if forgery == "another secret":
        answer = _deliver(OCCURRENCE, OTHER_SECRET)
    elif forgery == "a changed body":
        stamp = int(time.time())
        signature = _signature(secret, "evt_1", stamp, body)
        forged = json.dumps({**OCCURRENCE, "data": {"id": 8}}).encode()
        headers = {"webhook-id": "evt_1", "webhook-timestamp": str(stamp), "webhook-signature": signature}
        answer = Client().post("/hooks/books", forged, content_type="application/json", headers=headers)
    elif forgery == "an old timestamp":
        answer = _deliver(OCCURRENCE, secret, timestamp=int(time.time()) - 600)
    elif forgery == "a timestamp in the future":
        answer = _deliver(OCCURRENCE, secret, timestamp=int(time.time()) + 600)
    else:
        answer = Client().post("/hooks/books", body, content_type="application/json")

    assert answer.status_code == 401
    assert len(RECEIVED) == 0


def test_the_servers_verification_challenge_is_echoed_when_signed() -> None:
    challenge = {"type": "verification", "challenge": "c-123"}

    echoed = _deliver(challenge, settings.DEMO_WEBHOOK_SECRET, message_id="msg_v")
    unsigned = _deliver(challenge, OTHER_SECRET, message_id="msg_v")

    assert echoed.status_code == 200
    assert echoed.json() == {"challenge": "c-123"}
    assert unsigned.status_code == 401
    assert len(RECEIVED) == 0


def test_the_receiver_takes_posts_only() -> None:
    assert Client().get("/hooks/books").status_code == 405
