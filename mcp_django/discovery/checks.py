"""Discovery's system checks (E001 to E003): what the site publishes, and that its cards agree with the server.

A card is fetched before a client connects, and SEP-2127 asks that it not contradict what the server
answers once connected (`server/discover`'s `serverInfo` and `supportedVersions`, the transport at each
remote). The cards take those from the endpoints themselves, so the one way to make them disagree is a
`SERVER_CARD` setting that overrides them: E002.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.core.checks import CheckMessage, Error, Tags, register

from mcp_django.checks.support import setting, short
from mcp_django.discovery.conf import discovery_settings
from mcp_django.discovery.wire import CARD_FIELDS_FROM_SERVER, DESCRIPTION_MAX
from mcp_django.endpoints import mounted_endpoints


@register(Tags.urls)
def check_discovery(app_configs: Iterable[Any] | None = None, **kwargs: Any) -> list[CheckMessage]:
    """E001: a published endpoint no URLconf mounts; E002: a card field the endpoint owns; E003: a long text."""
    messages: list[CheckMessage] = []
    card = discovery_settings.SERVER_CARD
    if not isinstance(card, dict):
        return messages  # mcp_django.E004 reports it
    for field in sorted(CARD_FIELDS_FROM_SERVER & set(card)):
        messages.append(
            Error(
                f"{setting('SERVER_CARD')} sets {field!r}, which server/discover owns.",
                hint="Remove it: the cards take it from the endpoint, so they agree (docs/discovery.md).",
                id="mcp_django_discovery.E002",
            )
        )
    for field in ("title", "description"):
        value = card.get(field)
        if value is not None and not (isinstance(value, str) and 0 < len(value) <= DESCRIPTION_MAX):
            messages.append(
                Error(
                    f"{setting('SERVER_CARD')}[{field!r}] must be 1 to {DESCRIPTION_MAX} characters.",
                    hint=f"Shorten it; found {short(value)}.",
                    id="mcp_django_discovery.E003",
                )
            )
    names = discovery_settings.SERVER_CARD_ENDPOINTS
    if names is None or not isinstance(names, (list, tuple)):
        return messages
    try:
        mounted = {endpoint.name for endpoint in mounted_endpoints()}
    except Exception:  # a broken URLconf: check_endpoints and Django's URL checks report it
        return messages
    messages += [
        Error(
            f"{setting('SERVER_CARD_ENDPOINTS')} names {name!r}, which no endpoint is.",
            hint=f"Name mounted endpoints: {', '.join(sorted(mounted)) or 'none is mounted'}.",
            id="mcp_django_discovery.E001",
        )
        for name in names
        if name not in mounted
    ]
    return messages
