"""The admin's view of the events extension: the webhook subscriptions (owner, type, callback, lifetime,
deliveries and failures), their delivery attempts, and the occurrences kept for replay.

Clients make subscriptions and emits make occurrences, so the admin lists and inspects them, deletes a
subscription (which stops its deliveries), sends a subscription a signed test event, and retries failed
deliveries; it adds and edits nothing.
The signing secrets are never shown.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import timezone

from mcp_django.events.models import EventOccurrence, WebhookDelivery, WebhookSubscription

if TYPE_CHECKING:
    _SubscriptionAdmin = admin.ModelAdmin[WebhookSubscription]
    _DeliveryAdmin = admin.ModelAdmin[WebhookDelivery]
    _OccurrenceAdmin = admin.ModelAdmin[EventOccurrence]
else:  # ModelAdmin is generic only in django-stubs
    _SubscriptionAdmin = _DeliveryAdmin = _OccurrenceAdmin = admin.ModelAdmin


class _ReadOnly:
    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(WebhookSubscription)
class WebhookSubscriptionAdmin(_ReadOnly, _SubscriptionAdmin):
    """Every webhook subscription: who made it, to what, where it POSTs, until when, and how it fares."""

    list_display = ["id", "name", "user", "url", "expires_at", "live", "delivered", "failures", "endpoint"]
    list_filter = ["name", "endpoint", ("user", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["id", "name", "url", f"user__{get_user_model().USERNAME_FIELD}"]
    exclude = ["secret", "previous_secret"]
    list_select_related = ["user"]

    actions = ["send_test_event"]

    @admin.display(boolean=True, description="live")
    def live(self, subscription: WebhookSubscription) -> bool:
        return subscription.active

    @admin.action(description="Send a test event to the selected subscriptions' callbacks", permissions=["delete"])
    def send_test_event(self, request: HttpRequest, queryset: QuerySet[WebhookSubscription]) -> None:
        from mcp_django.events.delivery import kick
        from mcp_django.events.store import send_test

        sent = send_test(queryset.filter(expires_at__gt=timezone.now()))
        kick()
        self.message_user(request, f"Queued a test event for {sent} live subscription(s).", messages.SUCCESS)


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(_ReadOnly, _DeliveryAdmin):
    """Every delivery owed to a subscription: its status, attempts and the callback's last answer."""

    list_display = ["occurrence", "subscription", "status", "attempts", "last_status", "last_error", "updated"]
    list_filter = ["status", "subscription__name"]
    list_select_related = ["occurrence", "subscription"]
    actions = ["retry"]

    @admin.action(description="Retry the selected failed or dropped deliveries", permissions=["delete"])
    def retry(self, request: HttpRequest, queryset: QuerySet[WebhookDelivery]) -> None:
        from mcp_django.events.delivery import kick

        retried = queryset.exclude(status=WebhookDelivery.Status.DELIVERED).update(
            status=WebhookDelivery.Status.PENDING, attempts=0, next_attempt=timezone.now()
        )
        kick()
        self.message_user(request, f"Queued {retried} delivery(ies) again.", messages.SUCCESS)


@admin.register(EventOccurrence)
class EventOccurrenceAdmin(_ReadOnly, _OccurrenceAdmin):
    """The occurrences kept for replay (poll cursors, push streams, webhook retries), newest first."""

    list_display = ["id", "name", "event_id", "timestamp"]
    list_filter = ["name"]
    search_fields = ["event_id", "name"]
    date_hierarchy = "timestamp"
    ordering = ["-id"]
