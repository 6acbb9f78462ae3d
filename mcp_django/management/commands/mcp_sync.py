"""``manage.py mcp_sync``: give every provider, interceptor and tool in code its admin row, flag vanished ones.

::

    python manage.py mcp_sync

`migrate` does the same at its end, but asks no remote server (it stays off the network); run this after
a deploy that changed the code but no model, when a provider's tools changed at run time, or to list the
remote servers' tools, so the admin lists what runs now (the admin's tool list has the same as a button).
A remote server that does not answer is named; its tools' rows are kept, not flagged. A new row is blank
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
        parser.add_argument(
            "--no-remote",
            action="store_false",
            dest="remote",
            help="Ask no remote server for its tools (as migrate does); their rows are kept as they are.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        for synced in sync_inventory(options["database"], remote=options["remote"]):
            self.stdout.write(synced.summary())
            for what, why in synced.unheard.items():
                self.stdout.write(f"  not heard from {what} ({why}): its tools' rows are kept as they are")
