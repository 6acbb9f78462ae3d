"""The demo's model toolset (and DRF API) as tools, served on the adapter endpoint (``/mcp/adapter``).

``BookToolset`` serves ``list_books`` and ``get_book`` to every caller with the ``demo.view_book``
permission, and ``create_book``, ``update_book`` and ``delete_book`` to TEAM callers with the matching
model permissions (``seed_demo`` grants them: alice may view, bob add and change, carol everything).
"""

from __future__ import annotations

from mcp_django.scopes import Scope
from mcp_django.toolsets import ModelToolset

from .models import Book


class BookToolset(ModelToolset):
    """The catalogue's books: list, filter, order and page through them; edit them with the model permissions."""

    id = "demo.book_toolset"
    name = "Book toolset"
    model = Book
    fields = ["id", "title", "author", "year", "summary"]
    filters = {"title": ["icontains"], "author": ["exact", "icontains"], "year": ["exact", "gte", "lte"]}
    ordering = ["title", "author", "year"]
    actions = ["list", "get", "create", "update", "delete"]
    write_scope = Scope.TEAM
    page_size = 10
    max_rows = 50
