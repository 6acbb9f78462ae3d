"""Every wire name of Server Cards and the AI Catalog, in one place (the revision docs/discovery.md records).

From `modelcontextprotocol/experimental-ext-server-card` at 8924e08 (`schema.ts`, `docs/discovery.md`),
which tracks SEP-2127: a change of the spec is a change of this module.
"""

from __future__ import annotations

from typing import Final

CARD_SCHEMA: Final = "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json"
"""The `$schema` every card carries: the `v1` family, versioned by path rather than by date."""

CARD_MEDIA_TYPE: Final = "application/mcp-server-card+json"
CATALOG_MEDIA_TYPE: Final = "application/ai-catalog+json"
CATALOG_SPEC_VERSION: Final = "1.0"

CARD_SUFFIX: Final = "server-card"
"""Reserved under the Streamable HTTP URL: `GET <endpoint>/server-card`."""
CATALOG_PATH: Final = ".well-known/ai-catalog.json"
LEGACY_CARD_PATH: Final = ".well-known/mcp/server-card.json"
"""Not in the spec: the location many sites still serve (and clients still try) from the earlier drafts."""

TRANSPORT: Final = "streamable-http"
"""A remote's `type`: the only transport an endpoint's card lists (its WebSocket is not a card transport)."""

CATALOG_IDENTIFIER: Final = "urn:air:{publisher}:mcp:{name}"
"""An AI Catalog entry's `identifier`, domain-anchored: `urn:air:{publisher}:{namespace}:{name}`."""

CARD_FIELDS_FROM_SERVER: Final = frozenset({"$schema", "name", "version", "remotes"})
"""What a card takes from the endpoint itself, so that it agrees with `server/discover`: a site's
`SERVER_CARD` setting may not set these (check `mcp_django_discovery.E002`)."""

NAME_PATTERN: Final = r"^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$"
DESCRIPTION_MAX: Final = 100
"""The card's `description` and `title` are 1 to 100 characters."""

CORS_HEADERS: Final = {
    "Access-Control-Allow-Origin": "*",
    "Access-Control-Allow-Methods": "GET",
    "Access-Control-Allow-Headers": "Content-Type, If-None-Match",
    "Access-Control-Expose-Headers": "ETag",
}
"""What the spec requires on a hosted card, so browser-based clients can read it."""
