"""`manage.py mcp_machine_client create|list|revoke`: machine clients (client credentials) for service users."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from mcp_django.oauth.machines import create_machine_client
from mcp_django.oauth.models import MachineClient


class Command(BaseCommand):
    help = "Create, list or revoke the machine clients (OAuth client credentials) of service users."

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True)
        create = actions.add_parser("create", help="Create a client; prints its client_id (and secret, once).")
        create.add_argument("name")
        create.add_argument("--user", required=True, help="The service user the client's tokens act as.")
        keys = create.add_mutually_exclusive_group()
        keys.add_argument("--jwks-file", help="private_key_jwt, with the public keys (a JWKS) in this file.")
        keys.add_argument("--jwks-uri", help="private_key_jwt, with the https URL of the client's JWKS.")
        create.add_argument(
            "--identity-assertions",
            action="store_true",
            help="Allow it to exchange ID-JAGs of trusted identity providers (enterprise sign-in).",
        )
        actions.add_parser("list", help="List machine clients.")
        revoke = actions.add_parser("revoke", help="Delete a client and every token it holds.")
        revoke.add_argument("client_id")

    def handle(self, *args: Any, **options: Any) -> None:
        getattr(self, f"_{options['action']}")(options)

    def _create(self, options: dict[str, Any]) -> None:
        username_field = get_user_model().USERNAME_FIELD
        user = get_user_model().objects.filter(**{username_field: options["user"]}).first()
        if user is None:
            raise CommandError(f"No user {options['user']!r}.")
        jwks = None
        if options["jwks_file"]:
            try:
                jwks = json.loads(Path(options["jwks_file"]).read_text())
            except (OSError, ValueError) as error:
                raise CommandError(f"Cannot read the JWKS: {error}") from None
        method = MachineClient.PRIVATE_KEY_JWT if jwks or options["jwks_uri"] else MachineClient.SECRET_BASIC
        try:
            machine, secret = create_machine_client(
                options["name"],
                user,
                auth_method=method,
                jwks=jwks,
                jwks_uri=options["jwks_uri"] or "",
                identity_assertions=options["identity_assertions"],
            )
        except ValueError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(f"client_id: {machine.application.client_id}")
        if secret is not None:
            self.stdout.write(f"client_secret: {secret}  (shown once: only its hash is stored)")

    def _list(self, options: dict[str, Any]) -> None:
        for machine in MachineClient.objects.select_related("application", "application__user"):
            user = machine.service_user
            self.stdout.write(
                f"{machine.application.client_id}\t{machine.application.name}\t{user}\t{machine.auth_method}"
            )

    def _revoke(self, options: dict[str, Any]) -> None:
        deleted = MachineClient.objects.filter(application__client_id=options["client_id"]).first()
        if deleted is None:
            raise CommandError(f"No machine client {options['client_id']!r}.")
        deleted.application.delete()  # cascades to its tokens: refused from the next request on
        self.stdout.write(f"Revoked {options['client_id']} and every token it held.")
