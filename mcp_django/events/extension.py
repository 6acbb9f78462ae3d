"""`EventsExtension`: SEP-3415's Events (`io.modelcontextprotocol/events`) on the extension seam.

Served on every endpoint once some event type is declared (where none is, nothing is advertised), and on
a gateway or hub whose remote servers offer events (`sources`: their types listed, poll and push forwarded). Its
methods exist in protocol revision 2026-07-28 and later only, as the extension is defined there: poll
(`events/list`, `events/poll`), push (`events/stream`) and webhooks (`events/subscribe`,
`events/unsubscribe`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from mcp_django.events import wire
from mcp_django.events.declarations import event_types
from mcp_django.events.methods import list_events, poll_events
from mcp_django.events.push import stream_events
from mcp_django.events.sources import event_sources
from mcp_django.events.webhooks import subscribe, unsubscribe
from mcp_django.extensions import Extension
from mcp_django.protocol.features.base import STATELESS_ONLY, MethodSpec

if TYPE_CHECKING:
    from django.core.checks import CheckMessage

EVENTS_METHODS: tuple[MethodSpec, ...] = (
    MethodSpec(wire.LIST, list_events, eras=STATELESS_ONLY, operation=False),
    MethodSpec(wire.POLL, poll_events, eras=STATELESS_ONLY, operation=False),
    MethodSpec(wire.STREAM, stream_events, eras=STATELESS_ONLY, operation=False, streams=True),
    MethodSpec(wire.SUBSCRIBE, subscribe, eras=STATELESS_ONLY, operation=False),
    MethodSpec(wire.UNSUBSCRIBE, unsubscribe, eras=STATELESS_ONLY, operation=False),
)


class EventsExtension(Extension):
    """The site's declared event types, delivered by poll, push and signed webhooks."""

    identifier = wire.EXTENSION
    eras = STATELESS_ONLY

    def capability(self, endpoint: Any) -> Mapping[str, Any] | None:
        """`{}` once some event type is declared, or one of the endpoint's remote servers offers events; None
        (not served) otherwise."""
        return {} if len(event_types) or event_sources(endpoint) else None

    def methods(self, endpoint: Any) -> Sequence[MethodSpec]:
        return EVENTS_METHODS

    def check(self) -> list[CheckMessage]:
        from mcp_django.events.checks import check_events

        return check_events()
