"""The `MCP_DJANGO` keys of discovery (docs/discovery.md), read through `discovery_settings`.

Named on `MCPDiscoveryConfig.mcp_settings`, so `manage.py check` accepts and checks them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from mcp_django.checks.support import is_int
from mcp_django.conf import MCPSettings


def _names_or_none(value: Any) -> bool:
    return value is None or (isinstance(value, (list, tuple)) and all(isinstance(name, str) for name in value))


def _namespace(value: Any) -> bool:
    return value is None or (isinstance(value, str) and bool(value) and "/" not in value)


discovery_settings: Final = MCPSettings(
    {
        # The endpoints (by name) the site publishes cards of and lists in its AI Catalog; None: every mounted
        # one. An endpoint left out has no card at all (404), as a private one should.
        "SERVER_CARD_ENDPOINTS": None,
        # What the cards say beyond what the endpoints do: title, description, websiteUrl, icons, repository,
        # _meta. Never name, version or remotes: those come from the endpoint (check mcp_django_discovery.E002).
        "SERVER_CARD": {},
        # The reverse-DNS namespace of the cards' names (`com.example`); None: the request's host, reversed.
        "SERVER_CARD_NAMESPACE": None,
        # Seconds a client may cache a card or the catalog (Cache-Control: public, max-age=...).
        "SERVER_CARD_MAX_AGE": 3600,
    },
    owner="mcp_django.discovery",
    rules={
        "SERVER_CARD_ENDPOINTS": (_names_or_none, "a list of endpoint names or None"),
        "SERVER_CARD": (lambda v: isinstance(v, Mapping), "a dict of Server Card fields"),
        "SERVER_CARD_NAMESPACE": (_namespace, "a reverse-DNS namespace without '/' or None"),
        "SERVER_CARD_MAX_AGE": (lambda v: is_int(v) and v >= 0, "an integer >= 0"),
    },
)
