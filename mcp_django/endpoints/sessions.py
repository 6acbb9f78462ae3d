"""Where handshake-era sessions live between requests.

A session is opened by a successful `initialize` on one endpoint, by one principal. Every
later request names it with `Mcp-Session-Id`; `SessionStore.resume` answers None (the
transport then answers 404) for an id that is unknown, expired, ended, or presented on
another endpoint or by another principal: all four look the same to the client.

`DatabaseSessionStore` (the default) keeps sessions in the `MCPSession` table, shared by
every worker, behind an in-process cache: a steady stream of requests on one session does
no query at all. The cache revalidates an entry after `revalidate_after` seconds, and
activity pushes `expires_at` forward at most once per `touch_interval`. A worker's copy may be
that old, so it saves only what its own requests changed, merged into the row (a subscription
added on one worker and another on the next both stay).
"""

from __future__ import annotations

import copy
import dataclasses
import secrets
import time
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any, ClassVar, NamedTuple

from django.conf import settings
from django.dispatch import Signal
from django.utils import timezone

from mcp_django.conf import mcp_settings
from mcp_django.endpoints.overlay import on_change
from mcp_django.endpoints.session_cache import SessionCache, session_bytes
from mcp_django.protocol import InvalidParams, InvalidRequest, MCPError, SessionState
from mcp_django.protocol.jsonrpc import dump_json
from mcp_django.runtime.executor import run_sync


class SessionRefused(Exception):
    """`initialize` succeeded but its session is not kept: the transport answers `error` with `status`.

    Args:
        error: the JSON-RPC error to answer the `initialize` with.
        status: the HTTP status carrying it.
    """

    def __init__(self, error: MCPError, status: int) -> None:
        super().__init__(error.message)
        self.error = error
        self.status = status


def new_session_id() -> str:
    """Return a fresh, unguessable session id (URL-safe base64: visible ASCII only)."""
    return secrets.token_urlsafe(32)


def principal_id(principal: Any) -> str | None:
    """Return the key a session remembers its principal by; None for anonymous callers."""
    if principal is None or not getattr(principal, "is_authenticated", False):
        return None
    key = getattr(principal, "pk", None)
    return None if key is None else str(key)


@dataclasses.dataclass(slots=True)
class StoredSession:
    """A session as a store keeps it: the protocol state plus what it is bound to.

    Times are Unix timestamps. `touched_at` is when `expires_at` was last persisted.
    """

    session_id: str
    endpoint_name: str
    endpoint_path: str
    principal_id: str | None
    state: SessionState
    expires_at: float
    touched_at: float
    saved: dict[str, Any] = dataclasses.field(default_factory=dict)
    """The state as this process last read or wrote it: a store may save only what changed since."""
    opened_at: float | None = None
    """When `initialize` opened it (None: a store that does not know)."""
    client_address: str | None = None
    """The network address an anonymous client opened it from (None: a user's, or unknown)."""


session_ended = Signal()
"""Sent (by `SessionStore.end`) when a client ended its HTTP session with `DELETE`, with `record` (the
`StoredSession`, its `opened_at` when the store knows it) and `ended_at` (the store's clock). Sessions
that expire are announced by `sessions_expired`."""


class ExpiredSession(NamedTuple):
    """What `sessions_expired` tells of one session that expired: when it opened and expired (Unix times)."""

    opened_at: float
    expired_at: float
    protocol_version: str


sessions_expired = Signal()
"""Sent when expired sessions are deleted, with `sessions`: a list of `ExpiredSession`. They end in bulk, in
whichever process purges them (`DatabaseSessionStore.clear_expired`, in chunks, from a database thread),
or one at a time when a request finds its session expired. Sent only while someone listens."""

_EXPIRED_CHUNK = 1000


class SessionStore:
    """Persists handshake-era sessions; subclasses implement `create`, `get`, `update` and `delete`.

    Transports call only `open`, `resume`, `commit` and `end`, which hold the rules
    (binding to endpoint and principal, expiry, throttled activity writes).
    """

    touch_interval: ClassVar[float] = 60.0
    """Longest time between two writes that push `expires_at` forward (capped at a quarter of the timeout)."""

    def clock(self) -> float:
        """The current Unix time (tests move it)."""
        return time.time()

    # -- storage primitives -----------------------------------------------------------------------

    async def create(self, record: StoredSession) -> None:
        """Store a new session."""
        raise NotImplementedError(f"{type(self).__name__} must implement create()")

    async def get(self, session_id: str) -> StoredSession | None:
        """Return the stored session, or None when there is none (expired ones included)."""
        raise NotImplementedError(f"{type(self).__name__} must implement get()")

    async def update(self, record: StoredSession) -> bool:
        """Save the session's state and `expires_at`; False when it no longer exists."""
        raise NotImplementedError(f"{type(self).__name__} must implement update()")

    async def delete(self, session_id: str) -> None:
        """Forget a session (a no-op when it does not exist)."""
        raise NotImplementedError(f"{type(self).__name__} must implement delete()")

    async def count_open(self, principal_id: str | None, now: float) -> int:
        """How many sessions of `principal_id` (None: of anonymous callers) expire after `now`.

        Needed to cap sessions (`SESSION_MAX_PER_USER`, `SESSION_MAX_ANONYMOUS`): a store without it caps
        nothing, and setting either cap yourself is then `mcp_django.E060`.
        """
        raise NotImplementedError(f"{type(self).__name__} must implement count_open() to cap sessions")

    async def count_open_from(self, client_address: str | None, now: float) -> int:
        """How many anonymous sessions opened from `client_address` expire after `now`.

        By default every anonymous session, wherever it came from (`count_open(None, now)`): a store that
        keeps the address (`DatabaseSessionStore`) caps each address on its own.
        """
        return await self.count_open(None, now)

    async def clear_expired(self, now: float) -> int:
        """Delete every session that expired by `now`; return how many (`manage.py mcp_clearsessions`).

        Optional: without it, nothing purges the store's expired sessions (a cache's TTL may).
        """
        raise NotImplementedError(f"{type(self).__name__} must implement clear_expired()")

    # -- what transports call ---------------------------------------------------------------------

    @property
    def idle_timeout(self) -> float:
        return float(mcp_settings.SESSION_IDLE_TIMEOUT)

    async def open(
        self,
        state: SessionState,
        *,
        endpoint_name: str,
        endpoint_path: str,
        principal: Any,
        client_address: str | None = None,
    ) -> str:
        """Mint an id for the session `initialize` just created, store it, and return the id.

        Expired sessions are purged first, at most once per `SESSION_PURGE_INTERVAL` in this process.

        Raises:
            SessionRefused: the client's info and capabilities are over `SESSION_MAX_CLIENT_BYTES`, or
                the caller already has as many open sessions as `SESSION_MAX_PER_USER` (or, anonymous,
                `SESSION_MAX_ANONYMOUS` from its `client_address`) allows.
        """
        now = self.clock()
        self._check_size(state)
        await self._purge(now)
        owner = principal_id(principal)
        address = client_address if owner is None else None
        await self._check_count(owner, address, now)
        session_id = new_session_id()
        state.session_id = session_id
        state.changed = False
        record = StoredSession(
            session_id=session_id,
            endpoint_name=endpoint_name,
            endpoint_path=endpoint_path,
            principal_id=owner,
            state=state,
            expires_at=now + self.idle_timeout,
            touched_at=now,
            opened_at=now,
            client_address=address,
        )
        await self.create(record)
        return session_id

    _purged_at: float | None = None

    def _check_size(self, state: SessionState) -> None:
        limit = int(mcp_settings.SESSION_MAX_CLIENT_BYTES)
        size = len(dump_json(state.client_info)) + len(dump_json(state.client_capabilities))
        if size > limit:
            message = f"Invalid params: clientInfo and capabilities take {size} bytes; at most {limit} are kept"
            raise SessionRefused(InvalidParams(message), 200)

    async def _purge(self, now: float) -> None:
        interval = mcp_settings.SESSION_PURGE_INTERVAL
        if interval is None or (self._purged_at is not None and now - self._purged_at < interval):
            return
        if type(self).clear_expired is SessionStore.clear_expired:
            return  # a store that cannot purge expires its sessions its own way (a cache's TTL)
        self._purged_at = now
        await self.clear_expired(now)

    async def _check_count(self, owner: str | None, address: str | None, now: float) -> None:
        limit = mcp_settings.SESSION_MAX_ANONYMOUS if owner is None else mcp_settings.SESSION_MAX_PER_USER
        if limit is None or type(self).count_open is SessionStore.count_open:
            return  # uncapped, or a store that cannot count (capping it yourself is E060)
        count = await (self.count_open(owner, now) if owner is not None else self.count_open_from(address, now))
        if count < limit:
            return
        who = "one anonymous client address" if owner is None else "one user"
        message = f"Too Many Sessions: at most {limit} open sessions for {who}; end one (DELETE) or let one expire"
        raise SessionRefused(InvalidRequest(message), 429)

    async def resume(self, session_id: str, *, endpoint_name: str, principal: Any) -> StoredSession | None:
        """Return the live session `session_id` names for this endpoint and principal, else None."""
        record = await self.get(session_id)
        if record is None or record.endpoint_name != endpoint_name or record.principal_id != principal_id(principal):
            return None
        now = self.clock()
        if record.expires_at <= now:
            await self.delete(session_id)
            if record.opened_at is not None and sessions_expired.has_listeners(type(self)):
                expired = ExpiredSession(record.opened_at, record.expires_at, record.state.protocol_version)
                sessions_expired.send(type(self), sessions=[expired])
            return None
        timeout = self.idle_timeout
        if now - record.touched_at >= min(self.touch_interval, timeout / 4):
            record.expires_at, record.touched_at = now + timeout, now
            if not await self.update(record):
                return None
        return record

    async def commit(self, record: StoredSession) -> None:
        """Save the session if the protocol core changed its state."""
        if record.state.changed:
            record.state.changed = False
            await self.update(record)

    async def end(self, session_id: str, *, endpoint_name: str, principal: Any) -> bool:
        """End a session (HTTP `DELETE`); False when there was no such session to end.

        Sends `session_ended` once it is gone (telemetry records the session's duration from it).
        """
        record = await self.resume(session_id, endpoint_name=endpoint_name, principal=principal)
        if record is None:
            return False
        await self.delete(session_id)
        session_ended.send(type(self), record=record, ended_at=self.clock())
        return True


class DatabaseSessionStore(SessionStore):
    """Sessions in the `MCPSession` table, read through an in-process cache.

    A session changed on another worker is seen here within `revalidate_after` seconds; one ended
    (deleted, e.g. revoked in the admin) within `MCP_DJANGO["STATE_CHECK_INTERVAL"]`: deleting a row
    moves the shared `"sessions"` stamp, and every process forgets its cache when it sees the stamp move.
    """

    revalidate_after: ClassVar[float] = 5.0
    max_cached: ClassVar[int] = 10_000  # sessions; `SESSION_CACHE_MAX_BYTES` bounds their size (session_cache.py)

    def __init__(self) -> None:
        self._cache: SessionCache[StoredSession] = SessionCache(self.max_cached, self.revalidate_after)

    async def create(self, record: StoredSession) -> None:
        from mcp_django.models import MCPSession

        state = record.state
        row = MCPSession(
            session_id=record.session_id,
            endpoint_name=record.endpoint_name,
            endpoint_path=record.endpoint_path,
            principal_id=record.principal_id,
            protocol_version=state.protocol_version,
            client_info=state.client_info,
            client_capabilities=state.client_capabilities,
            log_level=state.log_level or "",
            initialized=state.initialized,
            subscriptions=list(state.subscriptions),
            last_seen=_datetime(record.touched_at),
            expires_at=_datetime(record.expires_at),
            client_address=(record.client_address or "")[:64],
        )
        await run_sync(row.save, force_insert=True)
        record.saved = _snapshot(state)
        self._remember(record)

    async def get(self, session_id: str) -> StoredSession | None:
        cached = self._cache.get(session_id)
        if cached is not None and time.monotonic() - cached[1] < self.revalidate_after:
            return cached[0]
        from mcp_django.models import MCPSession

        row = await run_sync(MCPSession.objects.filter(session_id=session_id).first)
        if row is None:
            self._cache.forget(session_id)
            return None
        if cached is not None:
            # Keep the object requests in flight already share; refresh it from the row.
            record = cached[0]
            _fill_state(record.state, row)
            record.expires_at, record.touched_at = _timestamp(row.expires_at), _timestamp(row.last_seen)
        else:
            state = SessionState(protocol_version=row.protocol_version, session_id=row.session_id)
            _fill_state(state, row)
            record = StoredSession(
                session_id=row.session_id,
                endpoint_name=row.endpoint_name,
                endpoint_path=row.endpoint_path,
                principal_id=None if row.principal_id is None else str(row.principal_id),
                state=state,
                expires_at=_timestamp(row.expires_at),
                touched_at=_timestamp(row.last_seen),
                opened_at=_timestamp(row.created),
                client_address=row.client_address or None,
            )
        record.saved = _snapshot(record.state)
        self._remember(record)
        return record

    async def update(self, record: StoredSession) -> bool:
        updated = await run_sync(self._save_changes, record)
        if not updated:
            self._cache.forget(record.session_id)
        return updated

    def _save_changes(self, record: StoredSession) -> bool:
        """Write the fields the state changed since `record.saved`; subscriptions as a merge into the row's."""
        from mcp_django.models import MCPSession

        state, saved = record.state, record.saved
        now = _snapshot(state)
        changes: dict[str, Any] = {name: now[name] for name in SCALAR_STATE if now[name] != saved.get(name)}
        if "log_level" in changes:
            changes["log_level"] = changes["log_level"] or ""
        changes.update(last_seen=_datetime(record.touched_at), expires_at=_datetime(record.expires_at))
        rows = MCPSession.objects.filter(session_id=record.session_id)
        if now["subscriptions"] == saved.get("subscriptions", ()):
            updated = rows.update(**changes)
        else:
            updated = 0
            for _ in range(MERGE_ATTEMPTS):
                stored = rows.values_list("subscriptions", flat=True).first()
                if stored is None:
                    break
                merged = _merged(stored, saved.get("subscriptions", ()), now["subscriptions"])
                # Compare-and-set: a subscription another worker saved since the read is not lost.
                updated = rows.filter(subscriptions=stored).update(subscriptions=merged, **changes)
                if updated:
                    state.subscriptions = tuple(merged)
                    break
            else:
                updated = rows.update(subscriptions=merged, **changes)  # contended beyond reason: this merge wins
                state.subscriptions = tuple(merged)
        if updated:
            record.saved = _snapshot(state)
        return bool(updated)

    async def delete(self, session_id: str) -> None:
        from mcp_django.models import MCPSession

        self._cache.forget(session_id)
        await run_sync(MCPSession.objects.filter(session_id=session_id).delete)

    async def count_open(self, principal_id: str | None, now: float) -> int:
        from mcp_django.models import MCPSession

        rows = MCPSession.objects.filter(expires_at__gt=_datetime(now))
        rows = rows.filter(principal__isnull=True) if principal_id is None else rows.filter(principal__pk=principal_id)
        return await run_sync(rows.count)

    async def count_open_from(self, client_address: str | None, now: float) -> int:
        from mcp_django.models import MCPSession

        rows = MCPSession.objects.filter(expires_at__gt=_datetime(now), principal__isnull=True)
        return await run_sync(rows.filter(client_address=(client_address or "")[:64]).count)

    async def clear_expired(self, now: float) -> int:
        from mcp_django.models import MCPSession

        rows = MCPSession.objects.filter(expires_at__lte=_datetime(now))
        if sessions_expired.has_listeners(type(self)):
            expired = rows.values_list("created", "expires_at", "protocol_version")
            await run_sync(self._announce_expired, expired.iterator(chunk_size=_EXPIRED_CHUNK))
        deleted, _ = await run_sync(rows.delete)
        return deleted

    def _announce_expired(self, rows: Iterable[tuple[datetime, datetime, str]]) -> None:
        """Send `sessions_expired` for `rows` (read in chunks: a purge may find many)."""
        chunk: list[ExpiredSession] = []
        for created, expires_at, version in rows:
            chunk.append(ExpiredSession(_timestamp(created), _timestamp(expires_at), version))
            if len(chunk) == _EXPIRED_CHUNK:
                sessions_expired.send(type(self), sessions=chunk)
                chunk = []
        if chunk:
            sessions_expired.send(type(self), sessions=chunk)

    def clear_cache(self) -> None:
        """Forget every cached session (the next request of each reads the database again)."""
        self._cache.clear()

    def _remember(self, record: StoredSession) -> None:
        self._cache.remember(record.session_id, record, session_bytes(record.state))


SCALAR_STATE = ("protocol_version", "client_info", "client_capabilities", "log_level", "initialized")
"""The session state saved field by field (last writer wins); `subscriptions` is merged instead."""

MERGE_ATTEMPTS = 5
"""How often `DatabaseSessionStore` reads the subscriptions again when another worker saved them in between."""


def _snapshot(state: SessionState) -> dict[str, Any]:
    snapshot = {name: copy.deepcopy(getattr(state, name)) for name in SCALAR_STATE}
    snapshot["subscriptions"] = tuple(state.subscriptions)
    return snapshot


def _merged(stored: Any, before: tuple[str, ...], after: tuple[str, ...]) -> list[str]:
    """The row's subscriptions with this worker's change applied: `before` -> `after`, in the row's order."""
    removed = set(before) - set(after)
    kept = [uri for uri in stored or () if isinstance(uri, str) and uri not in removed]
    return kept + [uri for uri in after if uri not in before and uri not in kept]


def _fill_state(state: SessionState, row: Any) -> None:
    state.protocol_version = row.protocol_version
    state.client_info = row.client_info
    state.client_capabilities = row.client_capabilities or {}
    state.log_level = row.log_level or None
    state.initialized = row.initialized
    state.subscriptions = tuple(uri for uri in row.subscriptions or () if isinstance(uri, str))


def _datetime(timestamp: float) -> datetime:
    value = datetime.fromtimestamp(timestamp, tz=UTC)
    return value if settings.USE_TZ else timezone.make_naive(value)


def _timestamp(value: datetime) -> float:
    if timezone.is_naive(value):
        value = timezone.make_aware(value)
    return value.timestamp()


_store: SessionStore | None = None


def get_session_store() -> SessionStore:
    """Return this process's session store, an instance of `MCP_DJANGO["SESSION_STORE"]`."""
    global _store
    if _store is None:
        store_class = mcp_settings.SESSION_STORE
        _store = store_class()
    return _store


def _forget_store() -> None:
    global _store
    _store = None


mcp_settings.on_reload(_forget_store)


def _forget_cached_sessions() -> None:
    clear_cache = getattr(_store, "clear_cache", None)
    if callable(clear_cache):
        clear_cache()


on_change("sessions", _forget_cached_sessions)
