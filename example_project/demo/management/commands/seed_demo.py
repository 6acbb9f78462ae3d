"""``manage.py seed_demo``: the demo superuser, three MCP users with API tokens, and a few books.

Created once, safe to run again. The MCP users show the three scopes:

- alice: no MCP group, so USER;
- bob: in group ``mcp-team``, which ``MCP_DJANGO["SCOPE_GROUPS"]`` maps to TEAM;
- carol: in group ``mcp-system``, which a ``GroupScope`` row (editable in the admin) maps to SYSTEM.

The book permissions the model toolset checks (``demo.toolsets``): alice may view books, bob (through
``mcp-team``) view, add and change them, carol (through ``mcp-system``) also delete them. Only alice
may curate books (``demo.curate_book``, which the ``curate_book`` tool requires, docs/permissions.md).

Their tokens (``rest_framework.authtoken``) are printed; send one as ``Authorization: Bearer <token>``.
"""

from __future__ import annotations

from typing import Any

from django.apps import apps
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.core.management.base import BaseCommand
from rest_framework.authtoken.models import Token

from example_project.demo import idp as demo_idp
from example_project.demo.models import Book
from mcp_django.models import GroupScope
from mcp_django.scopes import Scope

BOOKS = [
    ("Dune", "Frank Herbert", 1965, "A desert planet, a spice, and a prophecy."),
    ("The Left Hand of Darkness", "Ursula K. Le Guin", 1969, "An envoy on a world without fixed sexes."),
    ("Neuromancer", "William Gibson", 1984, "A washed-up hacker hired for one last job."),
    ("The Dispossessed", "Ursula K. Le Guin", 1974, "A physicist between an anarchist moon and its planet."),
    ("Foundation", "Isaac Asimov", 1951, "A mathematician foresees the fall of an empire."),
    ("Hyperion", "Dan Simmons", 1989, "Seven pilgrims tell their tales on the way to the Shrike."),
]

MCP_USERS = [
    # (username, group or None, what the group grants)
    ("alice", None, "USER"),
    ("bob", "mcp-team", "TEAM"),
    ("carol", "mcp-system", "SYSTEM"),
]
SYSTEM_GROUP = "mcp-system"
BOOK_PERMISSIONS = {
    # who -> the demo.*_book permissions granted (a user for alice, the groups for bob and carol)
    "alice": ("view_book", "curate_book"),
    "mcp-team": ("view_book", "add_book", "change_book"),
    "mcp-system": ("view_book", "add_book", "change_book", "delete_book"),
}

ADMIN_USERNAME = "admin"
ADMIN_PASSWORD = "admin"  # a local demo account, printed on purpose


MACHINE_USER = "ci-bot"
MACHINE_CLIENT_ID = "demo-machine"
MACHINE_CLIENT_SECRET = "demo-machine-secret"


class Command(BaseCommand):
    help = "Create the demo superuser (admin/admin), the MCP users alice, bob and carol with tokens, and the books."

    def handle(self, *args: Any, **options: Any) -> None:
        user_model = get_user_model()
        if not user_model.objects.filter(username=ADMIN_USERNAME).exists():
            user_model.objects.create_superuser(ADMIN_USERNAME, "admin@example.com", ADMIN_PASSWORD)
            self.stdout.write(f"Created superuser {ADMIN_USERNAME!r} with password {ADMIN_PASSWORD!r}.")
        else:
            self.stdout.write(f"Superuser {ADMIN_USERNAME!r} exists (password {ADMIN_PASSWORD!r} unless changed).")

        created = 0
        for title, author, year, summary in BOOKS:
            _, was_created = Book.objects.get_or_create(
                title=title, defaults={"author": author, "year": year, "summary": summary}
            )
            created += was_created
        self.stdout.write(f"{created} demo books created, {Book.objects.count()} in the catalogue.")
        self.seed_mcp_users()
        if apps.is_installed("mcp_django.oauth"):
            self.seed_machine_client()

    def seed_mcp_users(self) -> None:
        user_model = get_user_model()
        system, _ = Group.objects.get_or_create(name=SYSTEM_GROUP)
        GroupScope.objects.update_or_create(group=system, defaults={"scope": Scope.SYSTEM})
        self.stdout.write("MCP users (send the token as 'Authorization: Bearer <token>', or log in through OAuth")
        self.stdout.write("with the user's name as password):")
        for username, group_name, scope in MCP_USERS:
            user, _ = user_model.objects.get_or_create(username=username)
            if (
                not user.password or not user.has_usable_password()
            ):  # the OAuth login page (docs/oauth.md): their name, on purpose
                user.set_password(username)
                user.save(update_fields=["password"])
            if group_name is not None:
                group, _ = Group.objects.get_or_create(name=group_name)
                user.groups.add(group)
            codenames = BOOK_PERMISSIONS.get(group_name or username, ())
            granted = Permission.objects.filter(content_type__app_label="demo", codename__in=codenames)
            (group.permissions if group_name is not None else user.user_permissions).add(*granted)
            token, _ = Token.objects.get_or_create(user=user)
            self.stdout.write(f"  {username:<6} {scope:<7} {token.key}")

    def seed_machine_client(self) -> None:
        """A machine client (docs/oauth.md, "Machine clients") for the TEAM service user ci-bot, with a known secret.

        It may also present ID-JAGs of the demo identity provider (enterprise sign-in), whose subjects
        alice, bob and carol are linked to the users of those names.
        """
        from mcp_django.oauth.machines import create_machine_client
        from mcp_django.oauth.models import LinkedIdentity, MachineClient

        service, _ = get_user_model().objects.get_or_create(username=MACHINE_USER)
        service.groups.add(Group.objects.get_or_create(name="mcp-team")[0])
        if not MachineClient.objects.filter(application__client_id=MACHINE_CLIENT_ID).exists():
            machine, _ = create_machine_client("demo machine client", service, identity_assertions=True)
            machine.application.client_id = MACHINE_CLIENT_ID
            machine.application.client_secret = MACHINE_CLIENT_SECRET  # the demo's on purpose; hashed on save
            machine.application.save()
        # a database seeded before enterprise sign-in has the client without the right to present ID-JAGs
        MachineClient.objects.filter(application__client_id=MACHINE_CLIENT_ID).update(identity_assertions=True)
        for user in get_user_model().objects.filter(username__in=[username for username, _, _ in MCP_USERS]):
            LinkedIdentity.objects.get_or_create(issuer=demo_idp.ISSUER, subject=user.username, defaults={"user": user})
        self.stdout.write(
            f"Machine client {MACHINE_CLIENT_ID!r} (secret {MACHINE_CLIENT_SECRET!r}) acts as {MACHINE_USER!r} (TEAM),"
        )
        self.stdout.write(
            "and exchanges ID-JAGs of the demo identity provider for alice, bob and carol (manage.py demo_id_jag)."
        )
