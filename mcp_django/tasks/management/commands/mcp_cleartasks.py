"""``manage.py mcp_cleartasks``: delete the MCP tasks whose `ttlMs` has passed (`mcp_clearsessions` for tasks).

::

    python manage.py mcp_cleartasks

An expired task is answered as unknown whether its row is there or not; this frees the rows. Every web
process also purges them itself, at most once per `MCP_DJANGO["TASK_PURGE_INTERVAL"]`, when a task
starts; run this from cron when tasks start rarely, or with `TASK_PURGE_INTERVAL = None`.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from mcp_django.tasks.store import purge_expired


class Command(BaseCommand):
    help = "Delete the MCP tasks whose ttlMs has passed (MCP_DJANGO['TASK_TTL'])."

    def handle(self, *args: Any, **options: Any) -> None:
        self.stdout.write(f"{purge_expired()} expired MCP task(s) deleted.")
