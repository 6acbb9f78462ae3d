"""Scopes: how far a caller reaches, from Django auth groups.

`Scope` orders privilege levels, `USER < TEAM < SYSTEM`. Every tool, resource, prompt and
provider carries a minimum scope (USER unless declared otherwise); a caller sees what its
scope reaches and nothing else, and what it cannot see answers as unknown.

A user's scope is worked out by the scope policy, `MCP_DJANGO["SCOPE_POLICY"]`, by default
`GroupScopePolicy`; `mcp_django.endpoints.auth_cache` keeps its answers per user and drops them when a
user, their groups or a `GroupScope` row change, so a change applies to the next request:

- a superuser is SYSTEM;
- any other authenticated user gets the highest scope any of their groups grants, through
  `MCP_DJANGO["SCOPE_GROUPS"]` (`{"mcp-team": "TEAM"}`) or a `GroupScope` row, and at least USER;
- an anonymous caller has no scope (None), and sees nothing unless its endpoint allows
  anonymous access, which grants USER.

The enum and the per-request memo import no Django, so declarations can use `Scope`; the
policy imports the ORM only when it runs.
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final, TypeAlias

from mcp_django.runtime.executor import run_sync

if TYPE_CHECKING:
    from django.contrib.auth.base_user import AbstractBaseUser
    from django.contrib.auth.models import AnonymousUser

    from mcp_django.protocol.context import RequestContext

User: TypeAlias = "AbstractBaseUser | AnonymousUser"
"""A caller as Django knows one: an instance of the user model, or `AnonymousUser`."""

__all__ = [
    "ANONYMOUS_SCOPE",
    "GroupScopePolicy",
    "Scope",
    "ScopePolicy",
    "ScopeResolver",
    "User",
    "get_scope_policy",
    "is_authenticated",
    "limit_scope",
    "remember_scope",
    "remembered_scope",
]


_NUMERIC_FORMATS: Final = frozenset("bcdoxXneEfFgG%")


class Scope(enum.IntEnum):
    """How far a caller reaches: `USER < TEAM < SYSTEM`; a caller sees every item whose scope is <= its own."""

    USER = 0
    """The caller's own data; every authenticated user has at least this."""
    TEAM = 1
    """Data shared by the caller's team."""
    SYSTEM = 2
    """Application-wide infrastructure and cross-team data (superusers, and groups granted it)."""

    def __str__(self) -> str:
        """The name (`"TEAM"`), as the setting and the decorators spell it; `int(scope)` is the number."""
        return self.name

    def __format__(self, spec: str) -> str:
        """The name in f-strings (`f"{ctx.scope}"` is `"TEAM"`); a numeric format (`:d`) formats the number."""
        if spec and spec[-1] in _NUMERIC_FORMATS:
            return int.__format__(self, spec)
        return format(self.name, spec)

    @property
    def label(self) -> str:
        """The lower-case name, as the admin and the docs show it (`"team"`)."""
        return self.name.lower()

    @classmethod
    def parse(cls, value: Any) -> Scope:
        """Return the scope `value` names: a `Scope`, its integer, or its name in any case (`"team"`).

        Raises:
            ValueError: `value` names no scope.
        """
        if isinstance(value, cls):
            return value
        if isinstance(value, str) and value.upper() in cls.__members__:
            return cls[value.upper()]
        if isinstance(value, int) and not isinstance(value, bool) and value in cls._value2member_map_:
            return cls(value)
        raise ValueError(f"{value!r} is not a scope; use one of {', '.join(cls.__members__)}")


ScopeResolver: TypeAlias = "Callable[[RequestContext], Awaitable[Scope | None]]"
"""Works out the caller's scope for one request (`Endpoint.resolve_scope`); None: the caller sees nothing."""

ANONYMOUS_SCOPE: Final = Scope.USER
"""The scope an anonymous caller gets on an endpoint that allows anonymous access."""

_MEMO_KEY: Final = "mcp_django.scope"


def is_authenticated(principal: Any) -> bool:
    """True for a principal that is an authenticated (Django) user."""
    return principal is not None and getattr(principal, "is_authenticated", False) is True


SCOPE_LIMIT: Final = "mcp_scope_limit"
"""The attribute of a principal naming the most its credential reaches (an OAuth token's scopes)."""


def limit_scope(scope: Scope | None, principal: Any) -> Scope | None:
    """`scope`, lowered to what the principal's credential reaches when it carries a limit.

    An authentication class that accepts a credential narrower than its user (an OAuth access
    token granted `mcp:user` to a TEAM user) returns the user with a `mcp_scope_limit` attribute;
    the caller then reaches the lower of the two, so a token never exceeds its user, nor its grant.
    """
    limit = getattr(principal, SCOPE_LIMIT, None)
    if scope is None or limit is None:
        return scope
    return min(scope, Scope(limit))


def remember_scope(ctx: RequestContext, scope: Scope | None) -> None:
    """Remember the caller's scope for the rest of this request (the next request works it out again)."""
    ctx.connection.extra[_MEMO_KEY] = (ctx, scope)


def remembered_scope(ctx: RequestContext) -> tuple[bool, Scope | None]:
    """Return `(True, scope)` when this request's scope was already worked out, else `(False, None)`.

    The memo is tied to the `RequestContext` object, so a long-lived connection (WebSocket,
    stdio) still works the scope out again for each request.
    """
    entry = ctx.connection.extra.get(_MEMO_KEY)
    if isinstance(entry, tuple) and entry[0] is ctx:
        return True, entry[1]
    return False, None


class ScopePolicy:
    """Maps a Django user to the `Scope` it reaches; subclasses implement `scope_of`.

    Name a subclass in `MCP_DJANGO["SCOPE_POLICY"]`. Its answers are cached per user (see
    `mcp_django.endpoints.auth_cache`), so they must depend only on the user, its groups and `GroupScope`
    rows (whose changes drop the cache); a policy that reads other data calls
    `mcp_django.endpoints.auth_cache.forget_credentials()` when that data changes.
    """

    def scope_of(self, user: User | None) -> Scope | None:
        """Return the user's scope; None when it reaches nothing (anonymous, inactive)."""
        raise NotImplementedError(f"{type(self).__name__} must implement scope_of()")

    async def ascope_of(self, user: User | None) -> Scope | None:
        """`scope_of` for async code, run where the ORM may run (`mcp_django.runtime.executor.run_sync`)."""
        return await run_sync(self.scope_of, user)


class GroupScopePolicy(ScopePolicy):
    """Maps a Django user to a `Scope` from the user's groups; one query per call (none for superusers)."""

    def scope_of(self, user: User | None) -> Scope | None:
        """Return the user's scope (None for anonymous or inactive users). Runs one query for non-superusers."""
        if not self._counts(user):
            return None
        if getattr(user, "is_superuser", False):
            return Scope.SYSTEM
        return self.highest(self._rows(user))

    async def ascope_of(self, user: User | None) -> Scope | None:
        """`scope_of` for async code; on the event loop when it needs no query (anonymous, inactive, superuser)."""
        if not self._counts(user) or getattr(user, "is_superuser", False):
            return self.scope_of(user)
        return await super().ascope_of(user)

    @staticmethod
    def _counts(user: Any) -> bool:
        return is_authenticated(user) and getattr(user, "is_active", True) is not False

    @staticmethod
    def _rows(user: Any) -> list[tuple[str, int | None]]:
        groups = getattr(user, "groups", None)
        if groups is None:  # a custom user model without groups
            return []
        return list(groups.values_list("name", "mcp_scope__scope"))

    @staticmethod
    def highest(rows: Iterable[tuple[str, int | None]]) -> Scope:
        """The highest scope the `(group name, GroupScope value or None)` rows grant; at least USER."""
        from mcp_django.conf import mcp_settings

        by_name: Mapping[str, Any] = mcp_settings.SCOPE_GROUPS or {}
        best = Scope.USER
        for name, granted in rows:
            for value in (granted, by_name.get(name)):
                if value is not None:
                    best = max(best, Scope.parse(value))
        return best


_policy: ScopePolicy | None = None


def get_scope_policy() -> ScopePolicy:
    """The process's scope policy, an instance of `MCP_DJANGO["SCOPE_POLICY"]` (made again when settings change)."""
    global _policy, _listening
    if _policy is None:
        from mcp_django.conf import mcp_settings  # the package imports this module before Django is set up

        if not _listening:
            mcp_settings.on_reload(_forget_policy)
            _listening = True
        _policy = mcp_settings.SCOPE_POLICY()
    return _policy


_listening = False


def _forget_policy() -> None:
    global _policy
    _policy = None
