"""``manage.py mcp_stdio``: serve an MCP endpoint over stdio, for clients that launch the server themselves.

::

    python manage.py mcp_stdio --endpoint server --user alice

Reads newline-delimited JSON-RPC on stdin and writes replies to stdout; logs go to stderr only.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from mcp_django.conf import mcp_settings
from mcp_django.endpoints import Endpoint, get_endpoint
from mcp_django.endpoints.admission import Credentials, Refused
from mcp_django.transports.stdio import protect_stdout, serve_stdio, threaded_reader, writer


class Command(BaseCommand):
    help = (
        "Serve an MCP endpoint over stdio: newline-delimited JSON-RPC on stdin and stdout, logs on stderr. "
        "Desktop MCP clients launch it as a subprocess."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--endpoint",
            default="server",
            help="The name (or path) of the endpoint to serve, as mounted in the URLconf (default: server).",
        )
        parser.add_argument(
            "--user",
            help="The username the requests run as; without it they run as an anonymous caller.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            endpoint = get_endpoint(options["endpoint"])
        except LookupError as error:
            raise CommandError(str(error)) from None
        user = self.principal(options["user"], endpoint)
        with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C in a terminal: stop without a traceback
            asyncio.run(self.serve(endpoint, user))

    @staticmethod
    async def serve(endpoint: Endpoint, user: Any) -> None:
        """Admit the caller as every transport does (no Host, no Origin), then serve stdin until it closes."""
        try:
            admission = await endpoint.admit(host=None, origin=None, credentials=Credentials(user=user))
        except Refused as refusal:
            raise CommandError(f"The endpoint {endpoint.name!r} refused the caller: {refusal.message}") from None
        connection = endpoint.connection(admission.principal, transport="stdio")
        read = threaded_reader(sys.stdin.buffer)
        write = writer(protect_stdout())
        limit = int(mcp_settings.MAX_REQUEST_BYTES)
        await serve_stdio(endpoint.handler, connection, read, write, limit=limit, refresh=endpoint.overlay.refresh)

    @staticmethod
    def principal(username: str | None, endpoint: Endpoint) -> Any:
        """The user named `username`, or None (an anonymous caller) when the endpoint admits one.

        Raises:
            CommandError: no active user has that name, or the endpoint needs a user and none was named.
        """
        if username is None:
            if not endpoint.allow_anonymous:
                raise CommandError(
                    f"The endpoint {endpoint.name!r} does not admit anonymous callers; name a user with --user."
                )
            return None
        user_model = get_user_model()
        try:
            user = user_model._default_manager.get_by_natural_key(username)
        except user_model.DoesNotExist:
            raise CommandError(f"Unknown user {username!r}.") from None
        if not user.is_active:
            raise CommandError(f"The user {username!r} is inactive.")
        return user
