"""``manage.py mcp_clearsessions``: delete the MCP sessions that have expired, as `clearsessions` does for Django's.

::

    python manage.py mcp_clearsessions

An expired session is answered 404 like an unknown one whether its row is there or not; this only
frees the rows. Every worker also purges them itself, at most once per
`MCP_DJANGO["SESSION_PURGE_INTERVAL"]`, when a client opens a session; run this from cron when
sessions are opened rarely, or with `SESSION_PURGE_INTERVAL = None`.
"""

from __future__ import annotations

from typing import Any

from asgiref.sync import async_to_sync
from django.core.management.base import BaseCommand, CommandError

from mcp_django.endpoints.sessions import SessionStore, get_session_store


class Command(BaseCommand):
    help = "Delete the MCP sessions that have expired (MCP_DJANGO['SESSION_IDLE_TIMEOUT'])."

    def handle(self, *args: Any, **options: Any) -> None:
        store = get_session_store()
        if type(store).clear_expired is SessionStore.clear_expired:
            raise CommandError(f"{type(store).__name__} cannot purge expired sessions (no clear_expired()).")
        deleted = async_to_sync(store.clear_expired)(store.clock())
        self.stdout.write(f"{deleted} expired MCP session(s) deleted.")
