"""Events by webhook (SEP-3415): subscriptions, signed POSTs to a receiver on a real socket, retries, SSRF."""

from __future__ import annotations

import datetime
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.db import transaction
from django.test import Client, override_settings
from django.utils import timezone

from mcp_django.events import delivery
from mcp_django.events.models import WebhookDelivery, WebhookSubscription
from mcp_django.events.store import purge
from mcp_django.testing import pytest_plugin
from tests.events.receiver import OTHER_SECRET, SECRET, Receiver, receiver, signed_by
from tests.events.support import add_book, call, until

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def hooks() -> Iterator[Receiver]:
    with receiver() as listening, override_settings(MCP_DJANGO={"EVENTS_WEBHOOK_ALLOWED_HOSTS": ["127.0.0.1"]}):
        yield listening


@pytest.fixture
def client() -> Client:
    client = Client()
    client.force_login(get_user_model().objects.create_user("subscriber", password="pw"))
    return client


def _subscribe(client: Client, url: str, secret: str = SECRET, **params: Any) -> dict[str, Any]:
    delivery = {"mode": "webhook", "url": url, "secret": secret}
    return call(
        client, "events/subscribe", {"name": "book.added", "arguments": {}, "delivery": delivery, **params}, path="/mcp"
    )


def test_the_demo_s_book_added_reaches_a_signed_webhook_receiver(client: Client, hooks: Receiver) -> None:
    subscribed = _subscribe(client, hooks.url)["result"]
    verification = hooks.next()
    book = add_book()
    delivered = hooks.next()

    assert subscribed["id"].startswith("sub_")
    assert subscribed["truncated"] is False
    refresh_before = datetime.datetime.fromisoformat(subscribed["refreshBefore"])
    assert refresh_before - timezone.now() > datetime.timedelta(minutes=29)
    assert verification.json["type"] == "verification"
    assert signed_by(verification, SECRET)
    assert delivered.json["data"] == {"id": book.pk, "title": "Dune", "author": "Frank Herbert", "year": 1965}
    assert delivered.json["name"] == "book.added"
    assert delivered.headers["webhook-id"] == delivered.json["eventId"]
    assert delivered.headers["x-mcp-subscription-id"] == subscribed["id"]
    assert delivered.headers["content-type"] == "application/json"
    assert signed_by(delivered, SECRET)
    assert not signed_by(delivered, OTHER_SECRET)


def test_a_failing_callback_is_retried_until_it_answers_with_the_same_signed_message(
    client: Client, hooks: Receiver
) -> None:
    _subscribe(client, hooks.url)
    hooks.next()
    hooks.failures = 2
    with override_settings(MCP_DJANGO={"EVENTS_WEBHOOK_ALLOWED_HOSTS": ["127.0.0.1"], "EVENTS_WEBHOOK_BACKOFF": 0}):
        add_book()
        attempts = [hooks.next(), hooks.next(), hooks.next()]

    assert len({attempt.headers["webhook-id"] for attempt in attempts}) == 1
    assert all(signed_by(attempt, SECRET) for attempt in attempts)
    assert until(lambda: WebhookDelivery.objects.filter(status="delivered").exists())
    delivery = WebhookDelivery.objects.get()
    assert (delivery.attempts, delivery.last_status) == (3, 200)


def test_a_callback_that_keeps_failing_is_given_up_after_the_attempts(client: Client, hooks: Receiver) -> None:
    _subscribe(client, hooks.url)
    hooks.next()
    hooks.failures = 10
    settings = {
        "EVENTS_WEBHOOK_ALLOWED_HOSTS": ["127.0.0.1"],
        "EVENTS_WEBHOOK_BACKOFF": 0,
        "EVENTS_WEBHOOK_ATTEMPTS": 2,
    }
    with override_settings(MCP_DJANGO=settings):
        add_book()
        hooks.next(), hooks.next()
        assert until(lambda: WebhookDelivery.objects.filter(status="failed").exists())

    assert WebhookSubscription.objects.get().failures == 1
    assert hooks.quiet()  # no third attempt


def _waiting_for_a_retry(client: Client, hooks: Receiver) -> threading.Thread:
    """The deliverer thread, its first attempt failed, waiting a minute for the retry."""
    _subscribe(client, hooks.url)
    hooks.next()
    hooks.failures = 1
    with override_settings(MCP_DJANGO={"EVENTS_WEBHOOK_ALLOWED_HOSTS": ["127.0.0.1"], "EVENTS_WEBHOOK_BACKOFF": 60}):
        add_book()
        hooks.next()
        assert until(lambda: WebhookDelivery.objects.filter(attempts=1).exists())
    (deliverer,) = [thread for thread in threading.enumerate() if thread.name == "mcp-events-deliverer"]
    return deliverer


def test_a_stopped_deliverer_ends_and_the_next_kick_delivers_what_it_left_queued(
    client: Client, hooks: Receiver
) -> None:
    deliverer = _waiting_for_a_retry(client, hooks)
    assert deliverer.is_alive()

    assert delivery.stop(timeout=10)
    assert not deliverer.is_alive()
    assert WebhookDelivery.objects.get().status == "pending"

    WebhookDelivery.objects.update(next_attempt=timezone.now())
    delivery.kick()
    assert hooks.next().json["name"] == "book.added"
    assert until(lambda: WebhookDelivery.objects.filter(status="delivered").exists())


def test_the_pytest_plugin_stops_the_deliverer_a_test_left_running_before_its_database_goes(
    client: Client, hooks: Receiver, request: pytest.FixtureRequest
) -> None:
    deliverer = _waiting_for_a_retry(client, hooks)

    pytest_plugin.pytest_runtest_teardown(request.node)  # what pytest calls first at the test's end

    assert not deliverer.is_alive()


def test_a_subscription_past_its_ttl_gets_nothing_and_a_refresh_keeps_it_alive(client: Client, hooks: Receiver) -> None:
    first = _subscribe(client, hooks.url, ttlMs=60_000)["result"]
    hooks.next()
    WebhookSubscription.objects.update(expires_at=timezone.now() - datetime.timedelta(seconds=1))
    add_book("Lapsed")
    refreshed = _subscribe(client, hooks.url, secret=OTHER_SECRET)["result"]
    add_book("Refreshed")
    delivered = hooks.next()

    assert refreshed["id"] == first["id"]
    assert WebhookDelivery.objects.filter(occurrence__data__title="Lapsed").count() == 0
    assert delivered.json["data"]["title"] == "Refreshed"
    assert signed_by(delivered, OTHER_SECRET)  # the new secret signs...
    assert signed_by(delivered, SECRET)  # ...and the old one too, while the receiver rotates


def test_an_unsubscribed_callback_hears_nothing_more(client: Client, hooks: Receiver) -> None:
    _subscribe(client, hooks.url)
    hooks.next()
    params = {"name": "book.added", "arguments": {}, "delivery": {"url": hooks.url}}
    assert "result" in call(client, "events/unsubscribe", params, path="/mcp")
    add_book()

    assert WebhookSubscription.objects.count() == 0
    assert WebhookDelivery.objects.count() == 0


def test_a_subscription_is_ended_by_its_id_alone(client: Client, hooks: Receiver) -> None:
    subscribed = _subscribe(client, hooks.url)["result"]
    hooks.next()
    answer = call(client, "events/unsubscribe", {"id": subscribed["id"]}, path="/mcp")
    add_book()

    assert answer["result"]["resultType"] == "complete", answer
    assert WebhookSubscription.objects.count() == 0
    assert WebhookDelivery.objects.count() == 0


@pytest.mark.usefixtures("curated")
def test_a_subscriber_who_loses_the_permission_is_sent_the_signed_terminated_envelope_and_the_subscription_ends(
    hooks: Receiver,
) -> None:
    from mcp_django.events import emit

    user = get_user_model().objects.create_user("curator", password="pw")
    user.user_permissions.add(Permission.objects.get(codename="curate_book"))
    client = Client()
    client.force_login(user)
    delivery = {"mode": "webhook", "url": hooks.url, "secret": SECRET}
    subscribed = call(client, "events/subscribe", {"name": "book.curated", "delivery": delivery}, path="/mcp")
    hooks.next()  # the verification
    user.user_permissions.clear()
    emit("book.curated", {"title": "withheld"})
    ended = hooks.next()

    assert ended.json == {
        "type": "terminated",
        "error": {"code": -32012, "message": "Forbidden", "data": {"reason": "access_revoked"}},
    }
    assert ended.headers["webhook-id"].startswith("msg_terminated_")
    assert ended.headers["x-mcp-subscription-id"] == subscribed["result"]["id"]
    assert signed_by(ended, SECRET)
    assert until(lambda: not WebhookSubscription.objects.exists())
    assert hooks.quiet()


def test_a_pending_delivery_purged_before_it_got_through_is_told_as_a_signed_gap_envelope(
    client: Client, hooks: Receiver
) -> None:
    _subscribe(client, hooks.url)
    hooks.next()  # the verification
    hooks.failures = 1
    settings = {"EVENTS_WEBHOOK_ALLOWED_HOSTS": ["127.0.0.1"], "EVENTS_WEBHOOK_BACKOFF": 600, "EVENTS_MAX_PER_TYPE": 1}
    with override_settings(MCP_DJANGO=settings):
        add_book("Emma", "Jane Austen", 1815)
        refused = hooks.next()  # answered 503: pending, its retry ten minutes away
        with transaction.atomic():
            kept = add_book("Persuasion", "Jane Austen", 1817)
            purge("book.added")  # Emma's occurrence goes, and its pending delivery with it
        gap, delivered = hooks.next(), hooks.next()

    assert refused.json["data"]["title"] == "Emma"
    assert gap.json["type"] == "gap"
    assert gap.headers["webhook-id"].startswith("msg_gap_")
    assert signed_by(gap, SECRET)
    assert int(gap.json["cursor"]) >= int(refused.json["cursor"])
    assert delivered.json["data"]["id"] == kept.pk
    assert until(lambda: not WebhookSubscription.objects.filter(gap_owed=True).exists())


def test_a_callback_that_does_not_echo_the_challenge_is_refused(client: Client, hooks: Receiver) -> None:
    hooks.echo = False
    answer = _subscribe(client, hooks.url)

    assert answer["error"]["code"] == -32015
    assert answer["error"]["data"] == {"reason": "challenge_failed"}
    assert WebhookSubscription.objects.count() == 0


def test_an_anonymous_caller_cannot_subscribe_a_webhook() -> None:
    answer = call(Client(), "events/subscribe", {"name": "book.added", "delivery": {"url": "https://example.com/"}})

    assert answer["error"]["code"] == -32012


@pytest.mark.parametrize("scheme", ["http", "https"])
def test_a_callback_on_loopback_is_refused_and_never_called(client: Client, scheme: str) -> None:
    with receiver() as listening:  # reachable, but EVENTS_WEBHOOK_ALLOWED_HOSTS does not name it
        url = listening.url.replace("http://", f"{scheme}://")
        answer = _subscribe(client, url)
        named = _subscribe(client, url.replace("127.0.0.1", "localhost"))

        assert listening.quiet()
    assert answer["error"]["code"] == -32602
    assert named["error"]["code"] == -32602
    assert WebhookSubscription.objects.count() == 0


@pytest.mark.parametrize("secret", ["not-a-secret", "whsec_" + "c2hvcnQ=", None])
def test_a_secret_that_is_not_whsec_base64_of_24_to_64_bytes_is_refused(
    client: Client, hooks: Receiver, secret: Any
) -> None:
    answer = _subscribe(client, hooks.url, secret=secret)

    assert answer["error"]["code"] == -32602
    assert hooks.quiet()
