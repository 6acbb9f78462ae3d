"""Webhook subscriptions: `events/subscribe` and `events/unsubscribe`, and the deliveries an emit queues.

A subscription belongs to an authenticated principal (an anonymous caller is refused, `-32012`). Its id
is derived from the principal, the callback URL, the event type and the arguments, so subscribing again
with the same four is the client's refresh: it pushes `refreshBefore` on (and rotates the secret when
it brings a new one). A new callback must echo a signed verification challenge before anything is
delivered to it. The POSTs themselves run off the request path (`delivery.py`).
"""

from __future__ import annotations

import datetime
import hashlib
import json
import secrets
from collections.abc import Mapping
from typing import Any

from django.db import transaction
from django.utils import timezone

from mcp_django.events import wire
from mcp_django.events.access import caller_scope, principal_pk
from mcp_django.events.callbacks import check_callback, check_secret, post
from mcp_django.events.conf import events_settings
from mcp_django.events.declarations import EventType
from mcp_django.events.errors import CallbackEndpointError, EventForbidden, EventUnsupported
from mcp_django.events.methods import resolve
from mcp_django.events.models import WebhookDelivery, WebhookSubscription
from mcp_django.events.sources import remote_source
from mcp_django.events.store import after, parse_cursor, position
from mcp_django.protocol import InvalidParams, RequestContext
from mcp_django.protocol.features.base import Server
from mcp_django.runtime.executor import run_sync


def subscription_id(user_pk: Any, url: str, name: str, arguments: Mapping[str, Any]) -> str:
    """The id of the subscription of this principal, callback, type and arguments (the same on a refresh)."""
    key = json.dumps([str(user_pk), url, name, arguments], sort_keys=True, default=str)
    return wire.SUBSCRIPTION_ID_PREFIX + hashlib.sha256(key.encode()).hexdigest()[:32]


def _ttl(params: Mapping[str, Any]) -> float:
    asked = params.get("ttlMs")
    if asked is not None and (isinstance(asked, bool) or not isinstance(asked, (int, float)) or asked <= 0):
        raise InvalidParams("Invalid params: ttlMs must be a positive number")
    seconds = events_settings.EVENTS_WEBHOOK_TTL if asked is None else asked / 1000
    return float(min(max(seconds, events_settings.EVENTS_WEBHOOK_MIN_TTL), events_settings.EVENTS_WEBHOOK_MAX_TTL))


def _verify(url: str, secret: str, subscription: str) -> None:
    """POST the signed challenge; the callback must answer 2xx with `{"challenge": <the same>}`.

    Raises:
        CallbackEndpointError: it did not (`-32015`, `data.reason` says how).
    """
    challenge = secrets.token_urlsafe(24)
    body = json.dumps({"type": wire.VERIFICATION_TYPE, "challenge": challenge}).encode()
    answer = post(url, [secret], f"msg_verification_{secrets.token_hex(12)}", body, subscription)
    if not answer.ok:
        raise CallbackEndpointError(answer.error or f"http_{answer.status}")
    try:
        echoed = json.loads(answer.body).get("challenge")
    except (ValueError, AttributeError):
        echoed = None
    if not isinstance(echoed, str) or not secrets.compare_digest(echoed, challenge):
        raise CallbackEndpointError("challenge_failed")


def _subscribe(
    declared: EventType, arguments: dict[str, Any], user_pk: Any, scope: int, endpoint: str, params: Mapping[str, Any]
) -> dict[str, Any]:
    delivery = params.get("delivery")
    if not isinstance(delivery, Mapping):
        raise InvalidParams("Invalid params: delivery is required")
    if delivery.get("mode", wire.WEBHOOK_MODE) != wire.WEBHOOK_MODE:
        raise EventUnsupported(declared.name, str(delivery.get("mode")))
    secret = check_secret(delivery.get("secret"))
    url, _ = check_callback(delivery.get("url"))
    cursor = parse_cursor(params.get("cursor"))
    raw = dict(params.get("arguments") or {})  # stored as the client sent them; `arguments` are bound
    key = subscription_id(user_pk, url, declared.name, raw)
    known = WebhookSubscription.objects.filter(pk=key).first()
    if known is None:
        _verify(url, secret, key)
    expires = timezone.now() + datetime.timedelta(seconds=_ttl(params))
    truncated = False
    with transaction.atomic():
        subscription, created = WebhookSubscription.objects.select_for_update().get_or_create(
            pk=key,
            defaults={
                "user_id": user_pk,
                "endpoint": endpoint,
                "scope": scope,
                "name": declared.name,
                "arguments": raw,
                "url": url,
                "secret": secret,
                "expires_at": expires,
            },
        )
        if not created:
            if secret != subscription.secret:
                subscription.previous_secret, subscription.secret = subscription.secret, secret
            subscription.expires_at, subscription.scope, subscription.refreshed = expires, scope, timezone.now()
            subscription.save()
        if created and cursor is not None:  # replay what came after the client's cursor
            batch = after(declared, cursor, events_settings.EVENTS_MAX_PER_TYPE)
            truncated = batch.truncated
            WebhookDelivery.objects.bulk_create(
                [
                    WebhookDelivery(subscription=subscription, occurrence=row)
                    for row in batch.rows
                    if declared.matches(row.data, arguments)
                ]
            )
    return {
        "id": key,
        "refreshBefore": expires.isoformat().replace("+00:00", "Z"),
        "cursor": str(position(declared.name)),
        "truncated": truncated,
    }


async def subscribe(server: Server, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]:
    """Create or refresh a webhook subscription: `{id, refreshBefore, cursor, truncated}`."""
    await remote_source(params, ctx, wire.WEBHOOK_MODE)  # a forwarded type offers no webhooks: -32014
    declared, arguments = await resolve(params, ctx, wire.WEBHOOK_MODE)
    user_pk = principal_pk(ctx.principal)
    if user_pk is None:
        raise EventForbidden("Webhook subscriptions need an authenticated principal")
    scope = int(await caller_scope(ctx) or 0)
    endpoint = str(getattr(ctx.connection.endpoint, "name", ""))
    result = await run_sync(_subscribe, declared, arguments, user_pk, scope, endpoint, params)
    from mcp_django.events.delivery import kick

    kick()
    return result


def _unsubscribe(user_pk: Any, params: Mapping[str, Any], declared: EventType | None) -> None:
    key = params.get("id")
    if not isinstance(key, str):
        assert declared is not None
        delivery = params.get("delivery")
        url = delivery.get("url") if isinstance(delivery, Mapping) else None
        if not isinstance(url, str):
            raise InvalidParams("Invalid params: id or delivery.url is required")
        key = subscription_id(user_pk, url, declared.name, dict(params.get("arguments") or {}))
    WebhookSubscription.objects.filter(pk=key, user_id=user_pk).delete()


async def unsubscribe(server: Server, params: Mapping[str, Any], ctx: RequestContext) -> dict[str, Any]:
    """End a webhook subscription of the caller's (named by `id`, or by its type, arguments and URL): `{}`.

    By `id` alone the type is not resolved: the caller ends its own subscription even of a type it may no
    longer see."""
    declared = None if isinstance(params.get("id"), str) else (await resolve(params, ctx, wire.WEBHOOK_MODE))[0]
    user_pk = principal_pk(ctx.principal)
    if user_pk is None:
        raise EventForbidden("Webhook subscriptions need an authenticated principal")
    await run_sync(_unsubscribe, user_pk, params, declared)
    return {}
