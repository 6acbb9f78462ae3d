"""`manage.py mcp_events_deliver`: deliver the queued webhook deliveries, with their retries, until stopped."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from mcp_django.events.delivery import deliver_due, run_forever


class Command(BaseCommand):
    help = "Deliver the events extension's queued webhook deliveries (retries included) until stopped."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--once", action="store_true", help="Attempt what is due now, then stop.")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["once"]:
            deliver_due()
            return
        run_forever()
