"""The checks of `permissions=` (E190, E191, W190), each message asserted whole."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import Permission
from django.contrib.contenttypes.models import ContentType
from django.core.checks import Error, Warning

from mcp_django import Registry
from mcp_django.checks.permissions import check_permissions
from mcp_django.providers import ToolProvider, provider_registry


def about(owner: str) -> list[Any]:
    return [message for message in check_permissions() if message.msg.startswith(owner)]


def declare(name: str, permissions: Any) -> Registry:
    registry = Registry(f"checks-{name}")

    def function() -> str:
        """A tool."""
        return ""

    registry.tool(name=name, permissions=permissions)(function)
    return registry


def test_permissions_the_models_declare_need_no_database() -> None:
    registry = declare("declared", ["demo.view_book", "demo.curate_book", "auth.change_user"])

    assert about("tool 'declared'") == []
    del registry


@pytest.mark.django_db
def test_e190_a_permission_neither_declared_nor_in_the_database() -> None:
    registry = declare("ghost", "demo.haunt_book")

    assert about("tool 'ghost'") == [
        Error(
            "tool 'ghost' requires unknown permission 'demo.haunt_book'.",
            hint="Name an existing permission as 'app_label.codename' (docs/permissions.md).",
            id="mcp_django.E190",
        )
    ]
    del registry


@pytest.mark.django_db
def test_a_permission_row_no_model_declares_counts_as_existing() -> None:
    registry = declare("migrated", "demo.made_by_a_migration")
    book = ContentType.objects.get(app_label="demo", model="book")
    Permission.objects.create(codename="made_by_a_migration", name="Made in a data migration", content_type=book)

    assert about("tool 'migrated'") == []
    del registry


def test_w190_without_a_database_a_permission_no_model_declares_is_not_confirmed() -> None:
    registry = declare("unsure", "demo.haunt_book")  # no database access in this test: as before migrate

    assert about("tool 'unsure'") == [
        Warning(
            "tool 'unsure': permission 'demo.haunt_book' is not confirmed.",
            hint="No model declares it and the database could not be read: run migrate, then check.",
            id="mcp_django.W190",
        )
    ]
    del registry


class BadPermissions(ToolProvider):
    id = "tests.bad_perms"
    permissions = 7  # type: ignore[assignment]  # the mistake the check reports


def test_e191_a_provider_whose_permissions_are_no_names(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(provider_registry._providers, BadPermissions.id, BadPermissions())

    assert about("provider 'tests.bad_perms'") == [
        Error(
            "provider 'tests.bad_perms': permissions= is not a list of names.",
            hint='Set permissions = "app_label.codename", or a list of such names.',
            id="mcp_django.E191",
        )
    ]


def test_every_permission_check_message_is_under_80_characters() -> None:
    registry = declare("x" * 128, "demo." + "y" * 200)

    assert all(len(message.msg) < 80 for message in check_permissions())
    del registry
