"""``manage.py demo_id_jag alice``: an ID-JAG of the demo identity provider for a demo user, on stdout.

What a company's identity provider hands an MCP client after the user signs in there (enterprise
sign-in, docs/oauth.md); here the demo's own key signs it (``example_project.demo.idp``). The machine
client ``demo-machine`` exchanges it for a token of that user with the JWT bearer grant:

    ID_JAG=$(python manage.py demo_id_jag alice)
    curl -u demo-machine:demo-machine-secret -d grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer \\
        -d assertion="$ID_JAG" http://127.0.0.1:8000/oauth/token/

The server trusts it while it runs with ``MCP_EXAMPLE_DEMO_IDP_KEY`` set (``make demo``); each ID-JAG is
accepted once and lives five minutes.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from example_project.demo import idp as demo_idp
from example_project.demo.management.commands.seed_demo import MACHINE_CLIENT_ID
from mcp_django.oauth.models import LinkedIdentity


class Command(BaseCommand):
    help = "Print an ID-JAG of the demo identity provider for a demo user (alice, bob or carol)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username", help="The demo user the assertion names (linked by seed_demo).")
        parser.add_argument("--client", default=MACHINE_CLIENT_ID, help="The client_id that will present it.")
        parser.add_argument(
            "--base-url",
            default=settings.EXAMPLE_BASE_URL,
            help="Where the demo is served: the audience (its issuer) and the endpoint's origin.",
        )
        parser.add_argument("--path", default="/mcp", help="The MCP endpoint the token is for (its resource).")
        parser.add_argument(
            "--scope",
            default="mcp:user mcp:team mcp:system",
            help="The scopes the identity provider allows; the user's own scope caps them.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        link = LinkedIdentity.objects.filter(issuer=demo_idp.ISSUER, user__username=options["username"]).first()
        if link is None:
            raise CommandError(f"No demo identity is linked to {options['username']!r}: run manage.py seed_demo.")
        base_url = options["base_url"].rstrip("/")
        self.stdout.write(
            demo_idp.id_jag(
                link.subject,
                options["client"],
                audience=base_url,
                resource=base_url + "/" + options["path"].lstrip("/"),
                scope=options["scope"],
            )
        )
