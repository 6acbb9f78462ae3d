"""The demo's providers: tools discovered at run time from data, served on the adapter endpoint (``/mcp/adapter``).

Each provider reaches a different scope, so each demo user sees a different tool list:

- ``BookTools`` (USER, everyone): one ``about_<book>`` tool per book of the catalogue;
- ``AuthorTools`` (TEAM, bob and carol): one ``books_by_<author>`` tool per author;
- ``ModelTools`` (SYSTEM, carol only): one ``count_<app>_<model>`` tool per installed Django model;
- ``CatalogueReading`` (USER) and ``CatalogueEditing`` (TEAM): actions of the demo's command bus
  (``actions.py``), ``catalogue.stats`` and ``catalogue.book.*``, as tools taking ``{target, payload}``.

Add a book in the admin and its tool appears on the next ``tools/list``: nothing is declared ahead.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from django.apps import apps

from mcp_django import Context
from mcp_django.bus import BusProvider
from mcp_django.providers import ResourceProvider, ToolProvider
from mcp_django.scopes import Scope

from .models import Book

NO_ARGUMENTS: Mapping[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}
READ_ONLY = {"readOnlyHint": True}


def slug(text: str) -> str:
    """A tool-name-safe slug: `"The Left Hand of Darkness"` -> `"the_left_hand_of_darkness"`."""
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")[:100] or "unnamed"


class BookTools(ToolProvider):
    """One tool per book, telling what it is about."""

    id = "demo.books"
    name = "Book tools"
    scope = Scope.USER

    def list_tools(self, ctx: Context) -> list[dict[str, Any]]:
        return [
            {
                "name": f"about_{slug(book.title)}",
                "description": f"What {book.title} ({book.author}, {book.year}) is about.",
                "inputSchema": NO_ARGUMENTS,
                "annotations": READ_ONLY,
            }
            for book in Book.objects.all()
        ]

    def call_tool(self, name: str, arguments: dict[str, Any], ctx: Context) -> str:
        for book in Book.objects.all():
            if f"about_{slug(book.title)}" == name:
                return f"{book}: {book.summary or 'no summary yet.'}"
        return f"{name} is gone: the book was removed."


class AuthorTools(ToolProvider):
    """One tool per author, listing their books; for teams."""

    id = "demo.authors"
    name = "Author tools"
    scope = Scope.TEAM

    def list_tools(self, ctx: Context) -> list[dict[str, Any]]:
        authors = Book.objects.order_by("author").values_list("author", flat=True).distinct()
        return [
            {
                "name": f"books_by_{slug(author)}",
                "description": f"The books of {author} in the catalogue, oldest first.",
                "inputSchema": NO_ARGUMENTS,
                "annotations": READ_ONLY,
            }
            for author in authors
        ]

    async def call_tool(self, name: str, arguments: dict[str, Any], ctx: Context) -> str:
        async for author in Book.objects.values_list("author", flat=True).distinct():
            if f"books_by_{slug(author)}" == name:
                books = [f"{book.title} ({book.year})" async for book in Book.objects.filter(author=author)]
                return f"{author}, asked by {ctx.user} ({ctx.scope.label if ctx.scope else '?'}): " + "; ".join(
                    sorted(books, key=lambda text: text[-5:])
                )
        return f"{name} is gone: the author has no book left."


class ModelTools(ToolProvider, ResourceProvider):
    """One tool per installed Django model, counting its rows, and the model list as a resource; system only."""

    id = "demo.models"
    name = "Model inspection"
    scope = Scope.SYSTEM

    @staticmethod
    def _models() -> dict[str, Any]:
        return {f"count_{model._meta.app_label}_{model._meta.model_name}": model for model in apps.get_models()}

    def list_tools(self, ctx: Context) -> list[dict[str, Any]]:
        return [
            {
                "name": name,
                "description": f"Count the rows of {model._meta.label} ({model._meta.verbose_name_plural}).",
                "inputSchema": NO_ARGUMENTS,
                "annotations": READ_ONLY,
            }
            for name, model in sorted(self._models().items())
        ]

    def call_tool(self, name: str, arguments: dict[str, Any], ctx: Context) -> str:
        model = self._models()[name]
        return f"{model._meta.label}: {model._default_manager.count()} rows"

    def list_resources(self, ctx: Context) -> list[dict[str, Any]]:
        return [{"uri": "demo://models", "name": "models", "mimeType": "text/plain"}]

    def read_resource(self, uri: str, ctx: Context) -> str | None:
        if uri != "demo://models":
            return None
        return "\n".join(sorted(model._meta.label for model in apps.get_models()))


class CatalogueReading(BusProvider):
    """The demo bus's read-only actions as tools, for everyone."""

    id = "demo.bus.reading"
    name = "Catalogue actions (reading)"
    scope = Scope.USER
    bus = "example_project.demo.actions.bus"
    actions = ["catalogue.stats"]


class CatalogueEditing(BusProvider):
    """The demo bus's book edits as tools, for teams: every ``catalogue.book.*`` action."""

    id = "demo.bus.editing"
    name = "Catalogue actions (editing)"
    scope = Scope.TEAM
    bus = "example_project.demo.actions.bus"
    actions = ["catalogue.book.*"]
