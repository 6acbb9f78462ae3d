"""The demo's webhook receiver: the project subscribing to events of an MCP server (docs/events.md).

`/hooks/books` verifies each signed delivery with `DEMO_WEBHOOK_SECRET` (the secret the subscription was
made with) and keeps the latest ones in memory, logged to `demo.hooks`. Subscribe it to the demo's own
`book.added` with `MCPClient("books").subscribe_events("book.added", url=".../hooks/books",
secret=settings.DEMO_WEBHOOK_SECRET)`; a loopback URL needs `EVENTS_WEBHOOK_ALLOWED_HOSTS` (development only).
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Sequence
from typing import Final

from django.conf import settings

from mcp_django.events.receiver import Delivery, WebhookReceiver

logger = logging.getLogger("demo.hooks")

RECEIVED: Final[deque[Delivery]] = deque(maxlen=50)
"""The latest deliveries received, newest last."""


def _secrets(subscription_id: str) -> Sequence[str]:
    return [settings.DEMO_WEBHOOK_SECRET]


def _received(delivery: Delivery) -> None:
    RECEIVED.append(delivery)
    logger.info("%s %s from %s: %s", delivery.name, delivery.message_id, delivery.subscription_id, delivery.data)


book_hooks = WebhookReceiver.as_view(secrets=_secrets, on_event=_received)
