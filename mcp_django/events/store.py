"""Occurrences in the database: emitting one, reading a type's occurrences after a cursor, purging old ones.

A cursor is the id of the last occurrence a reader has seen (as a decimal string: opaque to clients).
Purging records, per type, the id it purged through (`EventLog`), so a reader whose cursor is older
learns that it missed some (`truncated: true`): a gap is marked, never silent.
"""

from __future__ import annotations

import dataclasses
import datetime
import uuid
from collections.abc import Callable, Iterable
from typing import Any

from django.db import transaction
from django.db.models import Count, Max
from django.utils import timezone

from mcp_django.events import wire
from mcp_django.events.conf import events_settings
from mcp_django.events.declarations import EventType, event_types
from mcp_django.events.models import EventLog, EventOccurrence, WebhookDelivery, WebhookSubscription
from mcp_django.protocol import InvalidParams

_emitted: list[Callable[[EventOccurrence], None]] = []
"""What runs once an emitting transaction commits: the push announcement, the webhook deliverer."""

PURGE_EVERY = 50
"""An emit purges its type's old occurrences once every this many occurrences."""


def on_emitted(callback: Callable[[EventOccurrence], None]) -> Callable[[EventOccurrence], None]:
    """Have `callback(occurrence)` run after each emitting transaction commits (the extension's delivery modes)."""
    _emitted.append(callback)
    return callback


def emit(name: str, payload: Any) -> EventOccurrence:
    """Record an occurrence of the declared event type `name`, and deliver it once the transaction commits.

    Call it where the thing happens, inside the transaction that makes it happen: an occurrence of work
    rolled back is never delivered. Poll clients read it from the database; push streams are told after
    the commit (across workers, through the Channels layer); each webhook subscription whose arguments it
    matches gets a queued delivery in this same transaction.

    Raises:
        LookupError: no event type `name` is declared.
        pydantic.ValidationError: the payload does not fit the type's payload annotation.
    """
    declared = event_types.get(name)
    if declared is None:
        raise LookupError(f"No event type {name!r} is declared (see docs/events.md)")
    data = declared.dump(payload)
    with transaction.atomic():
        row = EventOccurrence.objects.create(event_id=f"evt_{uuid.uuid4().hex}", name=name, data=data)
        queue_deliveries(declared, row)
        if row.pk % PURGE_EVERY == 0:
            purge(name)
    transaction.on_commit(lambda: _announce(row))
    return row


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


def send_test(subscriptions: Iterable[WebhookSubscription]) -> int:
    """Queue a test occurrence (`wire.TEST_EVENT`) for each of `subscriptions`; how many were queued.

    The occurrence is of no declared type, so no poll, push stream or other subscription sees it; each
    delivery is signed, retried and checked against the subscriber's access like any other.
    """
    chosen = list(subscriptions)
    if not chosen:
        return 0
    with transaction.atomic():
        row = EventOccurrence.objects.create(
            event_id=f"evt_{uuid.uuid4().hex}", name=wire.TEST_EVENT, data={"test": True}
        )
        WebhookDelivery.objects.bulk_create(
            [WebhookDelivery(subscription=subscription, occurrence=row) for subscription in chosen]
        )
    return len(chosen)


def delivery_counts() -> dict[str, int]:
    """The webhook deliveries kept (`EVENTS_RETENTION`), by status, and the live subscriptions: the dashboard's."""
    counts = dict.fromkeys(WebhookDelivery.Status.values, 0)
    for status, number in WebhookDelivery.objects.values_list("status").annotate(n=Count("id")):
        counts[status] = number
    counts["subscriptions"] = WebhookSubscription.objects.filter(expires_at__gt=timezone.now()).count()
    counts["types"] = len(event_types)
    return counts


def _announce(row: EventOccurrence) -> None:
    for callback in list(_emitted):
        callback(row)


def occurrence(row: EventOccurrence) -> dict[str, Any]:
    """The wire form of an occurrence: `{eventId, name, timestamp, data, cursor}`."""
    return {
        "eventId": row.event_id,
        "name": row.name,
        "timestamp": row.timestamp.isoformat().replace("+00:00", "Z"),
        "data": row.data,
        "cursor": str(row.pk),
    }


def parse_cursor(cursor: Any) -> int | None:
    """The id a client's cursor names; None for `null` (start from now).

    Raises:
        InvalidParams: not a cursor this server handed out.
    """
    if cursor is None:
        return None
    if isinstance(cursor, str) and cursor.isdigit() and len(cursor) < 20:
        return int(cursor)
    raise InvalidParams("Invalid params: unknown cursor", data={"cursor": cursor})


def position(name: str) -> int:
    """The cursor of "now" for a type: its newest occurrence's id (or how far it was purged)."""
    newest = EventOccurrence.objects.filter(name=name).aggregate(newest=Max("id"))["newest"]
    if newest is not None:
        return int(newest)
    log = EventLog.objects.filter(name=name).first()
    return log.purged_through if log is not None else 0


def purged_through(name: str) -> int:
    """The id the type's occurrences were purged through (0: none were): where a reader after a gap resumes."""
    log = EventLog.objects.filter(name=name).first()
    return log.purged_through if log is not None else 0


@dataclasses.dataclass(frozen=True)
class Batch:
    """What a reader gets after its cursor: the rows, the cursor after them, whether some were missed."""

    rows: list[EventOccurrence]
    cursor: int
    truncated: bool
    has_more: bool


def after(declared: EventType, cursor: int, limit: int, max_age: float | None = None) -> Batch:
    """The occurrences of `declared` after `cursor`, oldest first, at most `limit` of them.

    `truncated` when occurrences after the cursor were purged, or skipped as older than `max_age` seconds.
    """
    log = EventLog.objects.filter(name=declared.name).first()
    truncated = log is not None and cursor < log.purged_through
    rows = EventOccurrence.objects.filter(name=declared.name, id__gt=cursor).order_by("id")
    if max_age is not None:
        since = timezone.now() - datetime.timedelta(seconds=max_age)
        skipped = rows.filter(timestamp__lt=since).order_by("-id").values_list("id", flat=True).first()
        if skipped is not None:
            truncated = True
            rows = rows.filter(id__gt=skipped)
            cursor = max(cursor, skipped)
    found = list(rows[: limit + 1])
    has_more = len(found) > limit
    found = found[:limit]
    return Batch(found, found[-1].pk if found else cursor, truncated, has_more)


def purge(name: str | None = None) -> int:
    """Delete the occurrences past `EVENTS_RETENTION` or beyond `EVENTS_MAX_PER_TYPE` of each type (or of
    `name`), and record how far each type was purged. Returns how many went.

    A webhook subscription whose pending deliveries go with them is marked `gap_owed`: the deliverer POSTs
    it the `gap` envelope before anything else."""
    names = [name] if name is not None else list(EventOccurrence.objects.values_list("name", flat=True).distinct())
    cutoff = timezone.now() - datetime.timedelta(seconds=events_settings.EVENTS_RETENTION)
    deleted = 0
    for each in names:
        rows = EventOccurrence.objects.filter(name=each)
        through = rows.filter(timestamp__lt=cutoff).aggregate(through=Max("id"))["through"] or 0
        cap = events_settings.EVENTS_MAX_PER_TYPE
        over = rows.order_by("-id").values_list("id", flat=True)[cap : cap + 1].first()  # newest beyond the cap
        through = max(through, over or 0)
        if not through:
            continue
        with transaction.atomic():
            owed = WebhookDelivery.objects.filter(
                status=WebhookDelivery.Status.PENDING, occurrence__name=each, occurrence__id__lte=through
            )  # going with their occurrences: their subscriptions are told of the gap (`delivery.tell_gaps`)
            WebhookSubscription.objects.filter(deliveries__in=owed).update(gap_owed=True)
            deleted += rows.filter(id__lte=through).delete()[1].get(EventOccurrence._meta.label, 0)
            log, _ = EventLog.objects.select_for_update().get_or_create(name=each)
            if through > log.purged_through:
                log.purged_through = through
                log.save(update_fields=["purged_through"])
    return deleted
