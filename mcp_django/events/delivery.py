"""Webhook delivery off the request path: the queue of `WebhookDelivery` rows, worked with retries.

An emit queues a row per matching subscription in its own transaction; once it commits, `kick()` wakes
this process's deliverer thread, which POSTs what is due and sleeps until the next retry is. The queue
is the database, so what a process did not deliver before it stopped is delivered after: by the next
kick, or by `manage.py mcp_events_deliver`, which runs the same loop for as long as it runs (one per
site is enough; several claim rows without delivering one twice).

Each attempt first asks whether the subscriber may still receive the type, afresh from the database
(`access.allowed_now`): a subscriber who lost access (or whose type is no longer declared) is sent the
signed `terminated` envelope and the subscription ends; a lapsed one's deliveries are `dropped`. A 2xx delivers; a
410 ends the subscription (the client says it is gone); anything else is retried after
`EVENTS_WEBHOOK_BACKOFF` seconds, doubling, up to `EVENTS_WEBHOOK_ATTEMPTS` attempts (`failed`).
"""

from __future__ import annotations

import datetime
import json
import logging
import secrets
import threading
from typing import Final

from django.db import close_old_connections
from django.utils import timezone

from mcp_django.events import wire
from mcp_django.events.access import allowed_now_sync
from mcp_django.events.callbacks import post
from mcp_django.events.conf import events_settings
from mcp_django.events.declarations import event_types
from mcp_django.events.models import EventOccurrence, WebhookDelivery, WebhookSubscription
from mcp_django.events.store import occurrence, on_emitted, position

logger = logging.getLogger("mcp_django.events")

IDLE: Final = 60.0
"""The longest the deliverer sleeps with nothing due (a kick wakes it at once)."""

_wake = threading.Event()
_lock = threading.Lock()
_thread: _Deliverer | None = None


def _claim(delivery: WebhookDelivery) -> bool:
    """Take `delivery` for one attempt, unless another deliverer took it first (a lease on `next_attempt`)."""
    lease = timezone.now() + datetime.timedelta(seconds=2 * float(events_settings.EVENTS_WEBHOOK_TIMEOUT) + 5)
    taken = WebhookDelivery.objects.filter(
        pk=delivery.pk, status=WebhookDelivery.Status.PENDING, next_attempt=delivery.next_attempt
    ).update(next_attempt=lease)
    return taken == 1


def attempt(delivery: WebhookDelivery) -> None:
    """Make one attempt at `delivery` and record what came of it."""
    subscription, row = delivery.subscription, delivery.occurrence
    declared = event_types.get(subscription.name)
    status = WebhookDelivery.Status
    if not subscription.active:
        delivery.status, delivery.last_error = status.DROPPED, "lapsed"
        delivery.save(update_fields=["status", "last_error", "updated"])
        return
    if declared is None:
        terminate(subscription, {"code": wire.NOT_FOUND, "message": "Event type not found", "data": {"kind": "event"}})
        return
    if not allowed_now_sync(subscription.user_id, subscription.scope, declared):
        terminate(subscription, {"code": wire.FORBIDDEN, "message": "Forbidden", "data": {"reason": "access_revoked"}})
        return
    sent = occurrence(row)
    if row.name == wire.TEST_EVENT:  # the admin's test: no cursor of any type to resume from
        sent.pop("cursor", None)
    body = json.dumps(sent, separators=(",", ":")).encode()
    if len(body) > wire.MAX_WEBHOOK_BODY:
        delivery.status, delivery.last_error = status.FAILED, "payload over 256 KiB"
        delivery.save(update_fields=["status", "last_error", "updated"])
        return
    keys = [subscription.secret, *([subscription.previous_secret] if subscription.previous_secret else [])]
    answer = post(subscription.url, keys, row.event_id, body, subscription.pk)
    delivery.attempts += 1
    delivery.last_status, delivery.last_error = answer.status, answer.error
    if answer.ok:
        delivery.status = status.DELIVERED
        subscription.delivered += 1
        subscription.save(update_fields=["delivered"])
    elif answer.status == 410:
        subscription.delete()  # the client says the subscription is gone; its deliveries go with it
        return
    elif delivery.attempts >= events_settings.EVENTS_WEBHOOK_ATTEMPTS:
        delivery.status = status.FAILED
        subscription.failures += 1
        subscription.save(update_fields=["failures"])
    else:
        backoff = float(events_settings.EVENTS_WEBHOOK_BACKOFF) * 2 ** (delivery.attempts - 1)
        delivery.next_attempt = timezone.now() + datetime.timedelta(seconds=backoff)
    delivery.save()


def terminate(subscription: WebhookSubscription, error: dict[str, object]) -> None:
    """End `subscription`: POST its callback the signed `terminated` envelope (once, whatever it answers), then
    delete it and what it was still owed."""
    body = json.dumps({"type": wire.TERMINATED_TYPE, "error": error}, separators=(",", ":")).encode()
    message_id = wire.CONTROL_ID.format(type=wire.TERMINATED_TYPE, random=secrets.token_hex(8))
    keys = [subscription.secret, *([subscription.previous_secret] if subscription.previous_secret else [])]
    answer = post(subscription.url, keys, message_id, body, subscription.pk)
    logger.info(
        "Webhook subscription %s ended (%s); its callback answered %s", subscription.pk, error["message"], answer.status
    )
    subscription.delete()


def tell_gaps() -> None:
    """POST the signed `gap` envelope `{"type": "gap", "cursor": <now>}` to each live subscription owed one
    (its pending deliveries were purged); one that does not answer 2xx is told again at the next pass."""
    for subscription in WebhookSubscription.objects.filter(gap_owed=True, expires_at__gt=timezone.now()):
        cursor = str(position(subscription.name))
        body = json.dumps({"type": wire.GAP_TYPE, "cursor": cursor}, separators=(",", ":")).encode()
        message_id = wire.CONTROL_ID.format(type=wire.GAP_TYPE, random=secrets.token_hex(8))
        keys = [subscription.secret, *([subscription.previous_secret] if subscription.previous_secret else [])]
        if post(subscription.url, keys, message_id, body, subscription.pk).ok:
            WebhookSubscription.objects.filter(pk=subscription.pk).update(gap_owed=False)


def deliver_due(limit: int = 100, stopping: threading.Event | None = None) -> float | None:
    """Attempt every delivery due now (at most `limit`, none past `stopping` once it is set); return the seconds
    until the next one is due (None: none).

    The gaps owed are told first (`tell_gaps`)."""
    tell_gaps()
    due = (
        WebhookDelivery.objects.filter(status=WebhookDelivery.Status.PENDING, next_attempt__lte=timezone.now())
        .select_related("subscription", "occurrence")
        .order_by("next_attempt", "pk")[:limit]
    )
    for delivery in list(due):
        if stopping is not None and stopping.is_set():
            break
        if _claim(delivery):
            try:
                attempt(delivery)
            except Exception:
                logger.exception("Webhook delivery %s failed unexpectedly; it is retried", delivery.pk)
    following = (
        WebhookDelivery.objects.filter(status=WebhookDelivery.Status.PENDING)
        .order_by("next_attempt")
        .values_list("next_attempt", flat=True)
        .first()
    )
    return None if following is None else max(0.0, (following - timezone.now()).total_seconds())


def _loop(once: bool, stopping: threading.Event) -> None:
    """Deliver what is due, then sleep until the next is due or a kick; until `stopping` (or, `once`, nothing is
    pending)."""
    while True:
        _wake.clear()
        if stopping.is_set():  # after the clear: a stop's wake-up is never lost
            return
        try:
            wait = deliver_due(stopping=stopping)
        except Exception:
            logger.exception("The webhook deliverer failed; it tries again")
            wait = IDLE
        finally:
            close_old_connections()
        if once and wait is None:
            return
        _wake.wait(IDLE if wait is None else min(wait, IDLE))


class _Deliverer(threading.Thread):
    """This process's deliverer: works the queue until nothing is pending, or until `stop()`."""

    def __init__(self) -> None:
        super().__init__(name="mcp-events-deliverer", daemon=True)
        self.stopping = threading.Event()

    def run(self) -> None:
        global _thread
        try:
            _loop(once=True, stopping=self.stopping)
        finally:
            with _lock:
                _thread = None
            if _wake.is_set() and not self.stopping.is_set():  # a kick that came as the thread was ending
                kick()


def kick() -> None:
    """Wake this process's deliverer (starting it when it is not running)."""
    global _thread
    with _lock:
        _wake.set()
        if _thread is None:
            _thread = _Deliverer()
            _thread.start()


def stop(timeout: float | None = None) -> bool:
    """Stop this process's deliverer, when one runs, and wait up to `timeout` seconds for it to end.

    It ends after the attempt it is making, if any; what it has not delivered stays queued, for the next
    kick (which starts a deliverer again) or `manage.py mcp_events_deliver`. Returns whether none runs now.
    """
    with _lock:
        thread = _thread
    if thread is None:
        return True
    thread.stopping.set()
    _wake.set()
    thread.join(timeout)
    return not thread.is_alive()


def _stop_at_exit() -> None:
    """At interpreter exit, before threads are joined: let the deliverer finish its attempt, within the grace."""
    try:
        from mcp_django.conf import mcp_settings

        grace = float(mcp_settings.SHUTDOWN_GRACE)
    except Exception:  # settings unreadable this late: the default
        grace = 5.0
    stop(grace)


# The stdlib's hook (since 3.9), as runtime/executor.py uses it: a daemon thread is otherwise cut off mid-attempt,
# and the delivery it was making is posted again once its lease lapses.
threading._register_atexit(_stop_at_exit)  # type: ignore[attr-defined]


@on_emitted
def _emitted(row: EventOccurrence) -> None:
    kick()


def run_forever() -> None:
    """Deliver for as long as the process runs (`manage.py mcp_events_deliver`)."""
    _loop(once=False, stopping=threading.Event())
