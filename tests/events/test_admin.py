"""The admin lists the webhook subscriptions with their owner, never their secret, and retries deliveries."""

from __future__ import annotations

import datetime

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from mcp_django.events.models import EventOccurrence, WebhookDelivery, WebhookSubscription
from tests.events.receiver import SECRET

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
