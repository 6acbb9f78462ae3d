"""Fixtures of the toolset tests: the demo's books, and callers with and without the book permissions.

- `reader`: USER scope, `demo.view_book`;
- `editor`: TEAM scope (group `mcp-team`), every book permission;
- `stranger`: USER scope, no permission at all.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission

from example_project.demo.models import Book

BOOKS = [
    ("Dune", "Frank Herbert", 1965),
    ("The Left Hand of Darkness", "Ursula K. Le Guin", 1969),
    ("Neuromancer", "William Gibson", 1984),
    ("The Dispossessed", "Ursula K. Le Guin", 1974),
    ("Foundation", "Isaac Asimov", 1951),
    ("Hyperion", "Dan Simmons", 1989),
]


def make_user(username: str, *codenames: str, group: str | None = None) -> Any:
    user = get_user_model().objects.create_user(username)
    user.user_permissions.add(*Permission.objects.filter(content_type__app_label="demo", codename__in=codenames))
    if group is not None:
        user.groups.add(Group.objects.get_or_create(name=group)[0])
    return get_user_model().objects.get(pk=user.pk)  # no permission cache from before the grants


@pytest.fixture
def books(transactional_db: None) -> list[Book]:
    return [Book.objects.create(title=title, author=author, year=year) for title, author, year in BOOKS]


@pytest.fixture
def reader(transactional_db: None) -> Any:
    return make_user("reader", "view_book")


@pytest.fixture
def editor(transactional_db: None) -> Any:
    return make_user("editor", "view_book", "add_book", "change_book", "delete_book", group="mcp-team")


@pytest.fixture
def stranger(transactional_db: None) -> Any:
    return make_user("stranger")
