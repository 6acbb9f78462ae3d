"""A webhook receiver a Django project mounts, for the events it subscribed to on another MCP server.

    # urls.py
    from mcp_django.events.receiver import WebhookReceiver

    def book_added(delivery):
        Notification.objects.create(text=f"New book: {delivery.data['title']}")

    urlpatterns = [
        path("hooks/books", WebhookReceiver.as_view(secrets=[settings.BOOKS_HOOK_SECRET], on_event=book_added)),
    ]

Each POST is verified the Standard Webhooks way (`signatures.verify`: one of `secrets` signed it, within
five minutes of this clock), else 401; the server's verification challenge is echoed; an occurrence is
handed to `on_event` once (a retry of one already handled, same `webhook-id`, is answered 200 and not
handled again, for as long as Django's cache remembers it), and an exception there answers 500, so the
server retries. docs/events.md ("Receiving webhooks").
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from typing import Any, Final

from django.core.cache import cache
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.decorators import method_decorator
from django.views import View
from django.views.decorators.csrf import csrf_exempt

from mcp_django.events import wire
from mcp_django.events.signatures import TOLERANCE, InvalidSignature, verify

__all__ = ["Delivery", "Secrets", "WebhookReceiver"]

_SEEN: Final = "mcp_django.events.received:{}"


@dataclasses.dataclass(frozen=True)
class Delivery:
    """One occurrence a server delivered: its `webhook-id`, the subscription it came for, and the occurrence."""

    message_id: str
    subscription_id: str
    occurrence: dict[str, Any]

    @property
    def name(self) -> str:
        return str(self.occurrence.get("name", ""))

    @property
    def data(self) -> Any:
        return self.occurrence.get("data")

    @property
    def cursor(self) -> str | None:
        cursor = self.occurrence.get("cursor")
        return cursor if isinstance(cursor, str) else None


Secrets = Sequence[str] | Callable[[str], Sequence[str]]
"""The secrets a message may be signed with: a list, or a callable of the subscription id (its secrets)."""


@method_decorator(csrf_exempt, name="dispatch")
class WebhookReceiver(View):
    """Receives signed event deliveries: `WebhookReceiver.as_view(secrets=[...], on_event=handler)`.

    Attributes:
        secrets: the `whsec_` secrets the subscriptions were made with (two while rotating), or a callable
            `secrets(subscription_id)` returning them.
        on_event: called with each `Delivery` verified and not seen before.
        tolerance: seconds a message's timestamp may be off this server's clock.
    """

    http_method_names = ["post"]
    secrets: Secrets = ()
    on_event: Callable[[Delivery], object] | None = None
    tolerance: float = TOLERANCE

    def post(self, request: HttpRequest) -> HttpResponse:
        body = request.body
        if len(body) > wire.MAX_WEBHOOK_BODY:
            return HttpResponse(status=413)
        subscription_id = request.headers.get(wire.SUBSCRIPTION_ID_HEADER, "")
        headers = {name.lower(): value for name, value in request.headers.items()}
        secrets = self.secrets(subscription_id) if callable(self.secrets) else self.secrets
        try:
            message_id = verify(headers, body, list(secrets), tolerance=self.tolerance)
            message = json.loads(body)
        except (InvalidSignature, ValueError):
            return HttpResponse(status=401)
        if not isinstance(message, dict):
            return HttpResponse(status=400)
        if message.get("type") == wire.VERIFICATION_TYPE:
            return JsonResponse({"challenge": message.get("challenge")})
        seen = _SEEN.format(message_id)
        if cache.get(seen) is None:
            if self.on_event is not None:
                self.on_event(Delivery(message_id, subscription_id, message))
            cache.set(seen, True, timeout=24 * 3600)
        return HttpResponse(status=204)
