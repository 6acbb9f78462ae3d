"""The in-process cache `DatabaseSessionStore` reads sessions through, bounded by count and by bytes.

What a session takes is mostly what its client sent: `clientInfo` and `capabilities` (up to
`SESSION_MAX_CLIENT_BYTES` each time) and its subscriptions. Bounding the entries alone let a flood of
sessions with big client info grow a worker by hundreds of megabytes; the cache also holds no more
than `SESSION_CACHE_MAX_BYTES` of it, forgetting stale entries first, then the oldest.
"""

from __future__ import annotations

import time
from typing import Any, Final, Generic, TypeVar

from mcp_django.conf import mcp_settings
from mcp_django.protocol.jsonrpc import dump_json

OVERHEAD: Final = 1024
"""What a cached session costs besides what its client sent (its objects), in bytes."""

Record = TypeVar("Record")


def session_bytes(state: Any) -> int:
    """About how many bytes a session with `state` (a `SessionState`) takes in the cache."""
    sent = len(dump_json(state.client_info)) + len(dump_json(state.client_capabilities))
    return OVERHEAD + sent + sum(len(uri) for uri in state.subscriptions)


class SessionCache(Generic[Record]):
    """Session records by id, each with when it was cached; at most `max_entries` and `SESSION_CACHE_MAX_BYTES`.

    An entry older than `stale_after` seconds is the first to go when room is needed.
    """

    def __init__(self, max_entries: int, stale_after: float) -> None:
        self.max_entries = max_entries
        self.stale_after = stale_after
        self.entries: dict[str, tuple[Record, float, int]] = {}
        self.bytes = 0

    def get(self, session_id: str) -> tuple[Record, float] | None:
        """The record cached for `session_id` and when it was cached, or None."""
        entry = self.entries.get(session_id)
        return None if entry is None else (entry[0], entry[1])

    def remember(self, session_id: str, record: Record, size: int) -> None:
        """Cache `record`, which takes `size` bytes, making room first (a record larger than the bound is not kept)."""
        self.forget(session_id)
        max_bytes = int(mcp_settings.SESSION_CACHE_MAX_BYTES)
        if self._full(size, max_bytes):
            horizon = time.monotonic() - self.stale_after
            for key in [key for key, entry in self.entries.items() if entry[1] < horizon]:
                self.forget(key)
            while self.entries and self._full(size, max_bytes):
                self.forget(next(iter(self.entries)))
        if size <= max_bytes:
            self.entries[session_id] = (record, time.monotonic(), size)
            self.bytes += size

    def forget(self, session_id: str) -> None:
        entry = self.entries.pop(session_id, None)
        if entry is not None:
            self.bytes -= entry[2]

    def clear(self) -> None:
        self.entries.clear()
        self.bytes = 0

    def __contains__(self, session_id: object) -> bool:
        return session_id in self.entries

    def __len__(self) -> int:
        return len(self.entries)

    def _full(self, size: int, max_bytes: int) -> bool:
        return len(self.entries) >= self.max_entries or self.bytes + size > max_bytes
