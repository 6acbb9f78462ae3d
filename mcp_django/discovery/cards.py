"""The documents: an endpoint's Server Card and the site's AI Catalog, built from the mounted endpoints.

A card agrees with what the endpoint answers `server/discover` with, by construction: its `version`
(and `title`, `description`, `websiteUrl`, `icons` where the server info has them) is the endpoint's
`describe()`, its one remote's `supportedProtocolVersions` the revisions the protocol core speaks; the
site's `SERVER_CARD` setting adds the rest and may not override those (check
`mcp_django_discovery.E002`). Tools, resources and prompts are never listed: clients list them once
connected.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any, Final

from django.http import HttpRequest

from mcp_django.discovery.conf import discovery_settings
from mcp_django.discovery.wire import (
    CARD_FIELDS_FROM_SERVER,
    CARD_MEDIA_TYPE,
    CARD_SCHEMA,
    CARD_SUFFIX,
    CATALOG_IDENTIFIER,
    CATALOG_SPEC_VERSION,
    DESCRIPTION_MAX,
    TRANSPORT,
)
from mcp_django.endpoints import Endpoint, endpoint_registry
from mcp_django.protocol.versions import SUPPORTED_VERSIONS

_BEARER: Final = "A bearer token; where to get one: the endpoint's OAuth protected resource metadata."

_FROM_SERVER_INFO = ("title", "description", "websiteUrl", "icons")
"""`Implementation` fields a card repeats, so that the two never disagree."""


def published_endpoints(request: HttpRequest) -> list[tuple[str, Endpoint]]:
    """`(path, endpoint)` of the endpoints the site publishes (`SERVER_CARD_ENDPOINTS`), in path order."""
    registry = endpoint_registry(getattr(request, "urlconf", None))
    names = discovery_settings.SERVER_CARD_ENDPOINTS
    return [(registry.path_of(found), found) for found in registry if names is None or found.name in names]


def _host(request: HttpRequest) -> str:
    """The request's host without its port (`[::1]` keeps its brackets)."""
    host = request.get_host()
    return host if host.endswith("]") else host.rsplit(":", 1)[0]


def _namespace(request: HttpRequest) -> str:
    """The site's reverse-DNS namespace: the setting, else the host reversed (`example.com` -> `com.example`)."""
    configured = discovery_settings.SERVER_CARD_NAMESPACE
    if configured:
        return str(configured)
    host = _host(request).strip("[]")
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return ".".join(reversed(host.split(".")))
    return host.replace(":", "-")  # an IPv6 literal, in the name pattern's alphabet


def _short(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= DESCRIPTION_MAX else line[: DESCRIPTION_MAX - 1] + "…"


def card_of(request: HttpRequest, path: str, endpoint: Endpoint) -> dict[str, Any]:
    """The Server Card of `endpoint`, mounted at `path`, as this request's host reaches it."""
    server_info: Mapping[str, Any]
    try:
        server_info, instructions = endpoint.describe()
    except Exception:  # a gateway's remote is unreachable: the card says what the site itself knows
        from mcp_django.conf import mcp_settings

        server_info, instructions = mcp_settings.SERVER_INFO, mcp_settings.INSTRUCTIONS
    card: dict[str, Any] = {
        "$schema": CARD_SCHEMA,
        "name": f"{_namespace(request)}/{endpoint.name}",
        "version": str(server_info.get("version") or "0"),
    }
    card.update({key: server_info[key] for key in _FROM_SERVER_INFO if server_info.get(key)})
    extra = {key: value for key, value in discovery_settings.SERVER_CARD.items() if key not in CARD_FIELDS_FROM_SERVER}
    card.update(extra)
    if not card.get("description"):
        title = card.get("title") or server_info.get("name") or endpoint.name
        card["description"] = _short(instructions or "") or _short(f"The MCP server {title}.")
    remote: dict[str, Any] = {
        "type": TRANSPORT,
        "url": request.build_absolute_uri(path),
        "supportedProtocolVersions": list(SUPPORTED_VERSIONS),
    }
    if not endpoint.allow_anonymous:
        remote["headers"] = [
            {
                "name": "Authorization",
                "description": _BEARER,
                "isRequired": True,
                "isSecret": True,
            }
        ]
    card["remotes"] = [remote]
    return card


def card_url(request: HttpRequest, path: str) -> str:
    """Where the card of the endpoint at `path` is served: `<endpoint>/server-card`."""
    return request.build_absolute_uri(f"{path.rstrip('/')}/{CARD_SUFFIX}")


def catalog(request: HttpRequest) -> dict[str, Any]:
    """The AI Catalog of the site: one entry per published endpoint, pointing at its card by `url`."""
    publisher = _host(request).strip("[]")
    return {
        "specVersion": CATALOG_SPEC_VERSION,
        "entries": [
            {
                "identifier": CATALOG_IDENTIFIER.format(publisher=publisher, name=endpoint.name),
                "type": CARD_MEDIA_TYPE,
                "url": card_url(request, path),
            }
            for path, endpoint in published_endpoints(request)
        ],
    }
