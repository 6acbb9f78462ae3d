"""Webhook delivery: the queue of deliveries an emit writes (the rest of webhook delivery comes with push)."""

from __future__ import annotations

from django.utils import timezone

from mcp_django.events.declarations import EventType
from mcp_django.events.models import EventOccurrence, WebhookDelivery, WebhookSubscription
from mcp_django.protocol import InvalidParams

__all__ = ["queue_deliveries"]


def queue_deliveries(declared: EventType, row: EventOccurrence) -> int:
    """Queue `row` for each live subscription to its type whose arguments it matches (in the emit's transaction)."""
    owed = []
    for subscription in WebhookSubscription.objects.filter(name=declared.name, expires_at__gt=timezone.now()):
        try:
            bound = declared.bind(subscription.arguments)
        except InvalidParams:  # the type's arguments changed since: the subscription no longer fits
            continue
        if declared.matches(row.data, bound):
            owed.append(WebhookDelivery(subscription=subscription, occurrence=row))
    WebhookDelivery.objects.bulk_create(owed)
    return len(owed)
