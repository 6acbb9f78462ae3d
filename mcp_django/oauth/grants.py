"""OAuth scopes and the MCP scope they stand for: `mcp:user`, `mcp:team`, `mcp:system`.

A token reaches the highest MCP scope among the OAuth scopes it was granted, and never more than its
user's own scope (`mcp_django.scopes.limit_scope` lowers it at every request). The consent page grants
only the requested scopes the user has. Imports nothing of Django.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from mcp_django.scopes import Scope

SCOPE_OF: Final[dict[str, Scope]] = {"mcp:user": Scope.USER, "mcp:team": Scope.TEAM, "mcp:system": Scope.SYSTEM}
"""Each OAuth scope of an MCP token -> the MCP scope it reaches."""

OAUTH_SCOPES: Final[dict[str, str]] = {
    "mcp:user": "Use the MCP tools open to every user, as you",
    "mcp:team": "Use your team's MCP tools, as you",
    "mcp:system": "Use the site's administrative MCP tools, as you",
}
"""The OAuth scopes and the descriptions the consent page shows."""


def scope_reached(oauth_scopes: Iterable[str]) -> Scope | None:
    """The highest MCP scope among `oauth_scopes`; None when there is none (not an MCP token)."""
    reached = [SCOPE_OF[name] for name in oauth_scopes if name in SCOPE_OF]
    return max(reached) if reached else None


def granted_scopes(requested: Iterable[str], user_scope: Scope | None) -> list[str]:
    """The OAuth scopes to grant a client that asked for `requested`, for a user reaching `user_scope`.

    The requested MCP scopes the user has; when the client asked only for more than the user has, the
    user's own scope (narrower than any scope asked for). Nothing for a user without a scope. Other
    (non-MCP) scopes are kept as requested.
    """
    if user_scope is None:
        return []
    requested = list(dict.fromkeys(requested))
    others = [name for name in requested if name not in SCOPE_OF]
    asked = [name for name in requested if name in SCOPE_OF]
    kept = [name for name in asked if SCOPE_OF[name] <= user_scope]
    if not kept:
        kept = [next(name for name, scope in SCOPE_OF.items() if scope == user_scope)]
    return [*kept, *others]
