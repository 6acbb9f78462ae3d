"""Protocol revisions, the two eras, and version negotiation."""

from __future__ import annotations

import enum
from typing import Final

# mcp-types' HANDSHAKE_PROTOCOL_VERSIONS and MODERN_PROTOCOL_VERSIONS, spelled here so that reading them
# does not load the wire types (`wire.py`); tests/protocol/test_wire.py holds them equal.
HANDSHAKE_VERSIONS: Final[tuple[str, ...]] = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
STATELESS_VERSIONS: Final[tuple[str, ...]] = ("2026-07-28",)
SUPPORTED_VERSIONS: Final[tuple[str, ...]] = (*STATELESS_VERSIONS[::-1], *HANDSHAKE_VERSIONS[::-1])
"""Newest first, the order `server/discover` and `-32022` errors advertise them in."""

LATEST_HANDSHAKE_VERSION: Final = HANDSHAKE_VERSIONS[-1]
LATEST_STATELESS_VERSION: Final = STATELESS_VERSIONS[-1]
DEFAULT_HEADERLESS_VERSION: Final = "2025-03-26"
"""What the spec tells a server to assume when a handshake-era request carries no version header."""
BATCH_VERSIONS: Final[frozenset[str]] = frozenset({"2025-03-26"})
"""The only revision that allows JSON-RPC batches."""


class Era(enum.Enum):
    """The two shapes of the protocol: `initialize` handshake, or stateless per-request `_meta`."""

    HANDSHAKE = "handshake"
    STATELESS = "stateless"


def era_of_header(version_header: str | None) -> Era:
    """Route a request on its `MCP-Protocol-Version` header.

    Absent or a handshake revision selects the handshake era; any other value,
    unknown ones included, selects the stateless era so it can answer `-32022`.
    """
    if version_header is None or version_header in HANDSHAKE_VERSIONS:
        return Era.HANDSHAKE
    return Era.STATELESS


def negotiate_handshake_version(requested: object) -> str:
    """Return the version to answer `initialize` with: the requested one if known, else our latest."""
    if isinstance(requested, str) and requested in HANDSHAKE_VERSIONS:
        return requested
    return LATEST_HANDSHAKE_VERSION
