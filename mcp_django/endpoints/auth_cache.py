"""Who a credential is and how far a user reaches, kept in memory so a request in the steady state runs no query.

Two caches per worker process, both bounded and both dropped together:

- **credentials**: the result of an endpoint's authentication classes (the user, its id) for one
  `Authorization` header, keyed by the endpoint's authentication classes and a keyed BLAKE2b digest
  of the header (a raw token or password is never a key, and a digest means nothing outside this
  process). Only results of classes whose credential is that header alone
  (`mcp_django.auth.is_authorization_only`: DRF token and basic authentication, ours, simplejwt,
  knox, classes with `mcp_credentials = "authorization"`) are kept; session cookies are never
  cached. Refusals (401) are not kept: a flood of random tokens would only fill the cache, and a token
  issued a moment after a client first tried it works at once.
- **scopes**: the scope policy's answer (`MCP_DJANGO["SCOPE_POLICY"]`) per user id.

An entry lives `MCP_DJANGO["AUTH_CACHE_TTL"]` seconds at most (0 turns both caches off), and never
past the credential's own expiry (`credential_lifetime`). Saving or deleting a DRF (or knox) token,
a user (not a bare `last_login` update), a group, a `GroupScope`, or changing a user's groups drops
both caches in this process at once and moves the `"auth"` stamp, so every other worker drops its
own within `MCP_DJANGO["STATE_CHECK_INTERVAL"]` (the installed overlay reads the stamps and tells the
`mcp_django.endpoints.overlay.on_change` listeners). A change the signals do not see (`QuerySet.update()`, raw
SQL, another token model) applies within the TTL, or at once after `forget_credentials()`.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
import time
from collections.abc import Callable, Hashable, Mapping
from datetime import datetime
from typing import Any, ClassVar, Final

from django.db import DatabaseError, transaction

from mcp_django.conf import mcp_settings
from mcp_django.endpoints.overlay import on_change
from mcp_django.scopes import Scope, get_scope_policy

__all__ = [
    "AUTH",
    "AuthCache",
    "auth_cache",
    "connect",
    "credential_digest",
    "credential_lifetime",
    "forget_credentials",
]

logger = logging.getLogger("mcp_django.auth")

AUTH: Final = "auth"
"""The `StateVersion` stamp this module moves, and whose moves (read by the installed overlay) drop the caches."""

_DIGEST_KEY: Final = secrets.token_bytes(32)
"""Keys the header digests; made per process, so a digest cannot be matched against guesses elsewhere."""


def credential_digest(authorization: str) -> bytes:
    """A keyed digest of an `Authorization` header, the part of a cache key that names the credential."""
    return hashlib.blake2b(authorization.encode("utf-8", "surrogateescape"), key=_DIGEST_KEY, digest_size=32).digest()


def credential_lifetime(authenticator: Any, user: Any, auth: Any) -> float | None:
    """Seconds until the credential an authentication class accepted expires; None when it does not.

    The class's own `mcp_credential_lifetime(user, auth)` when it has one; else a JWT's `exp` claim
    (`auth.payload`, as simplejwt gives it) or a token's `expiry` (knox); else None.
    """
    own = getattr(authenticator, "mcp_credential_lifetime", None)
    if callable(own):
        return own(user, auth)  # type: ignore[no-any-return]  # a float, as documented
    payload = getattr(auth, "payload", None)
    if isinstance(payload, Mapping) and isinstance(payload.get("exp"), (int, float)):
        return float(payload["exp"]) - time.time()
    expiry = getattr(auth, "expiry", None)
    if isinstance(expiry, datetime):
        return expiry.timestamp() - time.time()
    return None


class AuthCache:
    """This process's credential and scope caches (see the module docstring).

    Args:
        clock: seconds on a monotonic clock; tests pass one they move.
    """

    max_entries: ClassVar[int] = 10_000
    """Most entries each cache holds; the oldest go first when it is full."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.generation = 0
        """Moves on every `clear()`; a result worked out across a clear is not kept (it may be stale)."""
        self._credentials: dict[Hashable, tuple[Any, float]] = {}
        self._scopes: dict[Hashable, tuple[Scope | None, float]] = {}

    @property
    def ttl(self) -> float:
        """`MCP_DJANGO["AUTH_CACHE_TTL"]`: seconds an entry lives; 0 means nothing is kept."""
        return float(mcp_settings.AUTH_CACHE_TTL)

    def clear(self) -> None:
        """Forget every credential and scope (in this process only; `forget_credentials` tells every worker)."""
        self.generation += 1
        self._credentials.clear()
        self._scopes.clear()

    # -- credentials ------------------------------------------------------------------------------

    def credential(self, key: Hashable) -> Any:
        """The user cached for `key`, or None when there is no live entry."""
        entry = self._credentials.get(key)
        if entry is None:
            return None
        if entry[1] <= self.clock():
            self._credentials.pop(key, None)
            return None
        return entry[0]

    def remember_credential(self, key: Hashable, user: Any, *, generation: int, lifetime: float | None = None) -> None:
        """Keep `user` as who `key`'s credential is, unless the caches were cleared since `generation` was read.

        Args:
            lifetime: seconds the credential itself stays valid, when it expires before the TTL.
        """
        seconds = self.ttl if lifetime is None else min(self.ttl, lifetime)
        if seconds > 0 and generation == self.generation:
            self._put(self._credentials, key, (user, self.clock() + seconds))

    # -- scopes -----------------------------------------------------------------------------------

    async def scope_of(self, user: Any) -> Scope | None:
        """The scope policy's answer for an authenticated user, from the cache when it is there."""
        key = getattr(user, "pk", None)
        if key is None or self.ttl <= 0:
            return await get_scope_policy().ascope_of(user)
        entry = self._scopes.get(key)
        if entry is not None and entry[1] > self.clock():
            return entry[0]
        generation = self.generation
        scope = await get_scope_policy().ascope_of(user)
        if generation == self.generation:
            self._put(self._scopes, key, (scope, self.clock() + self.ttl))
        return scope

    # -- both -------------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._credentials) + len(self._scopes)

    def _put(self, entries: dict[Hashable, Any], key: Hashable, value: tuple[Any, float]) -> None:
        # A signal receiver may clear the caches from another thread meanwhile: copy before iterating
        # (one C call under the GIL) and pop what may already be gone.
        if key not in entries and len(entries) >= self.max_entries:
            now = self.clock()
            for stale, (_, expires) in list(entries.items()):
                if expires <= now:
                    entries.pop(stale, None)
            for oldest in list(entries)[: max(0, len(entries) - self.max_entries + 1)]:
                entries.pop(oldest, None)
        entries[key] = value


auth_cache = AuthCache()
"""The process's credential and scope caches."""


def forget_credentials() -> None:
    """Drop every worker's cached credentials and scopes: this process's now, the others' within the state interval.

    The signal receivers call it; call it yourself after a change they do not see (a custom token
    model, `QuerySet.update()` on users). Inside a transaction the cache is dropped again when it commits,
    so a request that read the old rows meanwhile does not keep them.
    """
    from mcp_django.models import StateVersion

    auth_cache.clear()
    try:
        with transaction.atomic():  # a failure (no table yet: a migration) must not break the caller's transaction
            StateVersion.objects.update_or_create(key=AUTH, defaults={"version": secrets.randbits(62)})
    except DatabaseError as exc:
        logger.warning("Could not write the MCP auth stamp; other workers see the change after AUTH_CACHE_TTL: %s", exc)
    transaction.on_commit(auth_cache.clear)


# -- signals ---------------------------------------------------------------------------------------


def _changed(sender: Any, created: bool = False, **kwargs: Any) -> None:
    if not created:  # a new row names no credential and no user the caches could hold
        forget_credentials()


def _user_changed(sender: Any, created: bool = False, update_fields: Any = None, **kwargs: Any) -> None:
    if created or (update_fields is not None and set(update_fields) <= {"last_login"}):
        return  # a login stamps last_login: nothing a cached credential or scope depends on
    forget_credentials()


def _memberships_changed(sender: Any, action: str, **kwargs: Any) -> None:
    if action in ("post_add", "post_remove", "post_clear"):
        forget_credentials()


def _forget(sender: Any, **kwargs: Any) -> None:
    forget_credentials()


_connected = False


def connect() -> None:
    """Connect the receivers that drop the caches (from `MCPDjangoConfig.ready()`)."""
    from django.apps import apps
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group
    from django.db.models.signals import m2m_changed, post_delete, post_save

    from mcp_django.models import GroupScope

    global _connected
    if _connected:
        return
    _connected = True
    user_model = get_user_model()
    # A new group has no members and a new token names no cached credential; a new grant changes scopes.
    senders: list[tuple[Any, Callable[..., None]]] = [(user_model, _user_changed), (Group, _changed)]
    senders.append((GroupScope, _forget))
    if apps.is_installed("rest_framework.authtoken"):
        from rest_framework.authtoken.models import Token

        senders.append((Token, _changed))
    if apps.is_installed("knox"):
        senders.append((apps.get_app_config("knox").get_model("AuthToken"), _changed))
    for model, on_save in senders:
        uid = f"mcp_django.endpoints.auth_cache.{model._meta.label_lower}"
        post_save.connect(on_save, sender=model, dispatch_uid=uid)
        post_delete.connect(_forget, sender=model, dispatch_uid=uid)
    groups = getattr(user_model, "groups", None)
    if groups is not None:
        m2m_changed.connect(
            _memberships_changed, sender=groups.through, dispatch_uid="mcp_django.endpoints.auth_cache.groups"
        )
    on_change(AUTH, auth_cache.clear)
    mcp_settings.on_reload(auth_cache.clear)
