"""The `MCP_DJANGO` keys of the MCP client (docs/client.md, docs/gateway.md), read through `client_settings`.

`SERVERS` names the remote servers, the way `DATABASES` names databases; the `REMOTE_*` keys are the
defaults and bounds of every connection to one. Named on `MCPDjangoConfig.mcp_settings` (the client
ships with the core app, and so do its own checks, `client.checks`: mcp_django.E240-E243, W240); the checks
of what the gateway does with `SERVERS` entries are the gateway's (mcp_django_gateway.E040, E041, E165-E169).
"""

from __future__ import annotations

from typing import Final

from mcp_django.checks.support import is_number, is_positive_int
from mcp_django.conf import MCPSettings, MiB, Rule

_SECONDS: Final[Rule] = (lambda v: is_number(v) and v > 0, "a positive number of seconds")
_COUNT: Final[Rule] = (is_positive_int, "a positive integer")

client_settings: Final = MCPSettings(
    {
        # Remote MCP servers by name: what gateways, hubs, interceptor entries `{"SERVER": name}` and
        # `MCPClient(name)` connect to; then the timeouts of every entry that sets none.
        "SERVERS": {},
        "REMOTE_CONNECT_TIMEOUT": 10.0,
        "REMOTE_READ_TIMEOUT": 60.0,
        # Bounds on what a remote MCP server sends (docs/deployment.md): one message after decompression
        # (a JSON answer, an SSE event, a stdio line), one listing (all its pages), descriptions, input
        # rounds and the wall time of one forwarded operation.
        "REMOTE_MAX_MESSAGE_BYTES": 4 * MiB,
        "REMOTE_MAX_LIST_ITEMS": 10_000,
        "REMOTE_MAX_LIST_PAGES": 100,
        "REMOTE_MAX_DESCRIPTION_CHARS": 8192,
        "REMOTE_MAX_INPUT_ROUNDS": 10,
        "REMOTE_CALL_TIMEOUT": 600.0,
        # A hub's patience with each remote (docs/federation.md): one listing (or handshake) at most, and
        # how long one that did not answer stays out before a list asks it again.
        "REMOTE_LIST_TIMEOUT": 5.0,
        "REMOTE_RETRY_AFTER": 30.0,
        # The site as an OAuth client of remote servers: the largest answer it reads from their
        # authorization servers (metadata, registration, tokens); whether a server on a loopback name
        # may use an authorization server on loopback too (development and tests only).
        "REMOTE_OAUTH_MAX_BYTES": 64 * 1024,
        "REMOTE_OAUTH_ALLOW_LOOPBACK": False,
        # What a gateway or hub does with a remote tool's or prompt's definition (docs/federation.md):
        # "pin" it when first seen and withhold a changed one until an admin approves it, or "trust" it.
        "REMOTE_DEFINITIONS": "pin",
    },
    owner="mcp_django.client",
    rules={
        "REMOTE_CONNECT_TIMEOUT": _SECONDS,
        "REMOTE_READ_TIMEOUT": _SECONDS,
        "REMOTE_MAX_MESSAGE_BYTES": _COUNT,
        "REMOTE_MAX_LIST_ITEMS": _COUNT,
        "REMOTE_MAX_LIST_PAGES": _COUNT,
        "REMOTE_MAX_DESCRIPTION_CHARS": _COUNT,
        "REMOTE_MAX_INPUT_ROUNDS": _COUNT,
        "REMOTE_CALL_TIMEOUT": _SECONDS,
        "REMOTE_LIST_TIMEOUT": _SECONDS,
        "REMOTE_RETRY_AFTER": _SECONDS,
        "REMOTE_OAUTH_MAX_BYTES": _COUNT,
        "REMOTE_OAUTH_ALLOW_LOOPBACK": (lambda v: isinstance(v, bool), "True or False"),
        "REMOTE_DEFINITIONS": (lambda v: v in ("pin", "trust"), '"pin" or "trust"'),
    },
)
