"""The admin lists the webhook subscriptions with their owner, never their secret, retries deliveries, sends a
subscription a test event; the dashboard counts the deliveries."""

from __future__ import annotations

import datetime

import pytest
from django.contrib.auth import get_user_model
from django.test import Client, override_settings
from django.utils import timezone

from mcp_django.events.models import EventOccurrence, WebhookDelivery, WebhookSubscription
from tests.events.receiver import SECRET, receiver, signed_by
from tests.events.support import until

pytestmark = pytest.mark.django_db


def _subscription() -> WebhookSubscription:
    owner = get_user_model().objects.create_user("hooked", password="pw")
    return WebhookSubscription.objects.create(
        id="sub_x",
        user=owner,
        endpoint="server",
        scope=1,
        name="book.added",
        url="https://hooks.example/in",
        secret=SECRET,
        expires_at=timezone.now() + datetime.timedelta(hours=1),
    )


def test_the_admin_lists_subscriptions_with_their_owner_and_never_their_secret(admin_client: Client) -> None:
    subscription = _subscription()

    listing = admin_client.get("/admin/mcp_django_events/webhooksubscription/").content.decode()
    detail = admin_client.get(
        f"/admin/mcp_django_events/webhooksubscription/{subscription.pk}/change/"
    ).content.decode()

    assert "https://hooks.example/in" in listing
    assert "hooked" in listing
    assert SECRET not in listing + detail
    assert admin_client.get("/admin/mcp_django_events/webhooksubscription/add/").status_code == 403


def test_the_retry_action_queues_failed_deliveries_again(admin_client: Client) -> None:
    subscription = _subscription()
    row = EventOccurrence.objects.create(event_id="evt_1", name="book.added", data={})
    failed = WebhookDelivery.objects.create(subscription=subscription, occurrence=row, status="failed", attempts=6)

    admin_client.post(
        "/admin/mcp_django_events/webhookdelivery/",
        {"action": "retry", "_selected_action": [failed.pk]},
    )

    failed.refresh_from_db()
    assert failed.status == "pending"  # hooks.example does not resolve: at most one more attempt, then a retry
    assert failed.attempts <= 1


@pytest.mark.django_db(transaction=True)
def test_the_send_test_event_action_posts_a_signed_test_occurrence_that_no_poll_sees(admin_client: Client) -> None:
    subscription = _subscription()
    with receiver() as hooks, override_settings(MCP_DJANGO={"EVENTS_WEBHOOK_ALLOWED_HOSTS": ["127.0.0.1"]}):
        WebhookSubscription.objects.filter(pk=subscription.pk).update(url=hooks.url)
        admin_client.post(
            "/admin/mcp_django_events/webhooksubscription/",
            {"action": "send_test_event", "_selected_action": [subscription.pk]},
        )
        received = hooks.next()

    assert received.json["name"] == "mcp-django.dev/test"
    assert received.json["data"] == {"test": True}
    assert "cursor" not in received.json
    assert received.headers["x-mcp-subscription-id"] == subscription.pk
    assert signed_by(received, SECRET)
    assert until(lambda: WebhookDelivery.objects.filter(status="delivered").count() == 1)
    assert not EventOccurrence.objects.filter(name="book.added").exists()


def test_the_dashboard_counts_the_webhook_deliveries_by_status(admin_client: Client) -> None:
    subscription = _subscription()
    for number, status in enumerate(["delivered", "delivered", "failed", "pending"]):
        row = EventOccurrence.objects.create(event_id=f"evt_{number}", name="book.added", data={})
        WebhookDelivery.objects.create(subscription=subscription, occurrence=row, status=status)

    page = admin_client.get("/admin/mcp_django/controlroom/").content.decode()
    events = page.split('id="mcp-events"')[1].split("</section>")[0]

    assert "1 live webhook subscription(s)" in events
    assert "2 delivered" in events
    assert "1 pending" in events
    assert "1 failed" in events
