"""``manage.py mcp_sync``: give every provider, interceptor and tool in code its admin row, flag vanished ones.

::

    python manage.py mcp_sync

`migrate` does the same at its end; run this after a deploy that changed the code but no model, or
when a provider's tools changed at run time, so the admin lists what runs now. A new row is blank
("as the code says"), so syncing changes nothing any client sees, and moves no stamp.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from django.db import DEFAULT_DB_ALIAS

from mcp_django.control.inventory import sync_inventory


class Command(BaseCommand):
    help = (
        "Sync the MCP admin's provider, interceptor and tool rows with the code: "
        "create the missing ones (blank: as the code says), flag those whose item is gone."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--database",
            default=DEFAULT_DB_ALIAS,
            help="The database to sync (default: default).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        for synced in sync_inventory(options["database"]):
            label = synced.model._meta.verbose_name_plural
            self.stdout.write(
                f"{label}: {synced.created} created, {synced.flagged} no longer in code, {synced.restored} back in code"
            )
