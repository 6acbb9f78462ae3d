"""The events extension's rows: the occurrences kept for replay, the gap marker of each type, and the
webhook subscriptions with their delivery queue.

Everything a delivery needs is here, so it survives a restart and any worker can do it: an occurrence
is written in the transaction that emits it, a `WebhookDelivery` row per subscriber with it, and a
deliverer (in the web process after the commit, or `manage.py mcp_events_deliver`) works the queue.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone


class EventOccurrence(models.Model):
    """One occurrence of an event type; its id orders a type's occurrences and is the cursor after it."""

    event_id = models.CharField(
        max_length=64, unique=True, help_text="The occurrence's eventId: clients deduplicate on it."
    )
    name = models.CharField(max_length=200, help_text="The event type.")
    data = models.JSONField(help_text="The payload, as the event type's payloadSchema describes it.")
    timestamp = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        verbose_name = "event occurrence"
        indexes = [models.Index(fields=["name", "id"], name="mcp_events_name_id")]

    def __str__(self) -> str:
        return f"{self.name} {self.event_id}"


class EventLog(models.Model):
    """Per event type, how far its occurrences were purged: a cursor before that reads `truncated: true`."""

    name = models.CharField(max_length=200, unique=True)
    purged_through = models.BigIntegerField(default=0, help_text="The id of the last occurrence purged.")

    class Meta:
        verbose_name = "event log"

    def __str__(self) -> str:
        return f"{self.name} (purged through {self.purged_through})"


class WebhookSubscription(models.Model):
    """A client's webhook subscription: where to POST one event type's occurrences, signed, until it lapses.

    Its id is derived from the principal, the callback URL, the event type and the arguments, so a client
    that subscribes again (its refresh) finds the same subscription.
    """

    id = models.CharField(max_length=80, primary_key=True)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="mcp_event_subscriptions")
    endpoint = models.CharField(max_length=100, help_text="The endpoint it was made on.")
    scope = models.PositiveSmallIntegerField(help_text="The most the subscriber reached when subscribing.")
    name = models.CharField(max_length=200, db_index=True, help_text="The event type.")
    arguments = models.JSONField(default=dict, blank=True)
    url = models.CharField(max_length=2000, help_text="The callback the occurrences are POSTed to.")
    secret = models.CharField(max_length=200, help_text="The client's whsec_ signing secret.")
    previous_secret = models.CharField(
        max_length=200, blank=True, help_text="The secret before the last rotation: deliveries are signed with both."
    )
    expires_at = models.DateTimeField(db_index=True, help_text="When it lapses unless the client refreshes it.")
    created = models.DateTimeField(default=timezone.now)
    refreshed = models.DateTimeField(default=timezone.now)
    delivered = models.PositiveIntegerField(default=0)
    failures = models.PositiveIntegerField(default=0, help_text="Deliveries given up after every attempt.")
    gap_owed = models.BooleanField(
        default=False, help_text="Deliveries it was owed were purged: its callback is owed the gap envelope."
    )

    class Meta:
        verbose_name = "webhook subscription"

    def __str__(self) -> str:
        return f"{self.name} -> {self.url}"

    @property
    def active(self) -> bool:
        return self.expires_at > timezone.now()


class WebhookDelivery(models.Model):
    """One occurrence owed to one subscription: attempted until it is delivered or the attempts run out."""

    class Status(models.TextChoices):
        PENDING = "pending", "pending"
        DELIVERED = "delivered", "delivered"
        FAILED = "failed", "failed"
        DROPPED = "dropped", "dropped"

    subscription = models.ForeignKey(WebhookSubscription, on_delete=models.CASCADE, related_name="deliveries")
    occurrence = models.ForeignKey(EventOccurrence, on_delete=models.CASCADE, related_name="deliveries")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING, db_index=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    next_attempt = models.DateTimeField(default=timezone.now, db_index=True)
    last_status = models.PositiveSmallIntegerField(null=True, blank=True, help_text="The callback's last HTTP status.")
    last_error = models.CharField(max_length=200, blank=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "webhook delivery"
        verbose_name_plural = "webhook deliveries"
        constraints = [models.UniqueConstraint(fields=["subscription", "occurrence"], name="mcp_events_one_delivery")]

    def __str__(self) -> str:
        return f"{self.occurrence} -> {self.subscription_id} ({self.status})"
