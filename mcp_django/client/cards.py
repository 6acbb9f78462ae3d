"""Reading a remote's Server Card (SEP-2127), so a client can find a server from its card URL.

    client = await MCPClient.from_server_card("https://books.example/mcp/server-card", entry={"TOKEN": "..."})

The card's first `streamable-http` remote is the server's URL; the card's `name` names the connection. The
card is fetched like the remote's own answers: no redirects, no proxies from the environment, its body
bounded by `REMOTE_MAX_MESSAGE_BYTES`. The wire names are the server side's (`mcp_django.discovery.wire`).
docs/discovery.md ("From a client").
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import urljoin

import httpx2

from mcp_django.client.conf import client_settings
from mcp_django.client.config import ServerConfig
from mcp_django.client.servers import server_config
from mcp_django.discovery import wire
from mcp_django.exceptions import BackendUnavailable


async def read_server_card(url: str, *, timeout: float | None = None) -> dict[str, Any]:  # noqa: ASYNC109
    """The Server Card at `url` (a JSON object).

    Raises:
        BackendUnavailable: the URL does not answer 200 with a JSON object within the bounds.
    """
    seconds = timeout or client_settings.REMOTE_CONNECT_TIMEOUT
    limit = client_settings.REMOTE_MAX_MESSAGE_BYTES
    accept = f"{wire.CARD_MEDIA_TYPE}, application/json"
    try:
        async with (
            httpx2.AsyncClient(timeout=seconds, follow_redirects=False, trust_env=False) as client,
            client.stream("GET", url, headers={"Accept": accept}) as response,
        ):
            if response.status_code != 200:
                raise BackendUnavailable(url, "unreachable", f"the server card answered HTTP {response.status_code}")
            body = b""
            async for part in response.aiter_bytes():
                body += part
                if len(body) > limit:
                    raise BackendUnavailable(url, "limit", f"the server card is over {limit} bytes")
    except httpx2.HTTPError as error:
        raise BackendUnavailable(url, "unreachable", f"{type(error).__name__}: {error}") from None
    try:
        card = json.loads(body)
    except ValueError:
        card = None
    if not isinstance(card, dict):
        raise BackendUnavailable(url, "protocol", "the server card is not a JSON object")
    return card


def card_server(card: Mapping[str, Any], card_url: str, entry: Mapping[str, Any] | None = None) -> ServerConfig:
    """The `ServerConfig` of the card's first Streamable HTTP remote, with `entry`'s keys (`TOKEN`, `HEADERS`,
    timeouts) added; named by the card's `name`.

    Raises:
        BackendUnavailable: the card lists no Streamable HTTP remote.
    """
    remotes = card.get("remotes")
    urls = [
        remote["url"]
        for remote in (remotes if isinstance(remotes, list) else [])
        if isinstance(remote, dict) and remote.get("type") == wire.TRANSPORT and isinstance(remote.get("url"), str)
    ]
    if not urls:
        raise BackendUnavailable(card_url, "protocol", f"the server card lists no {wire.TRANSPORT} remote")
    name = card.get("name")
    return server_config(
        {**(entry or {}), "URL": urljoin(card_url, urls[0])}, name=name if isinstance(name, str) else None
    )
