"""The demo's model toolset and DRF API as tools, served on the adapter endpoint (``/mcp/adapter``).

``BookToolset`` serves ``list_books`` and ``get_book`` to every caller with the ``demo.view_book``
permission, and ``create_book``, ``update_book`` and ``delete_book`` to TEAM callers with the matching
model permissions (``seed_demo`` grants them: alice may view, bob add and change, carol everything).

``BookAPITools`` publishes the DRF viewset of ``api.py`` (``list_api_books``, ``get_api_book``,
``create_api_book``, ``update_api_book``): each call runs through the viewset, so its
``DjangoModelPermissions``, its throttle and its serializer's validation apply to the MCP caller.
``CatalogueStatsTools`` publishes an ``APIView``'s GET as ``get_catalogue_stats``.

``BookNinjaTools`` publishes the django-ninja API of ``ninja_api.py`` (``find_books``, ``read_book``,
``suggest_book``, ``staff_report``): Ninja's own authentication, validation and ``HttpError``s apply.

``BookAdminActions`` publishes the book admin's actions (``book_delete_selected``,
``book_clear_summaries``) to staff users the admin allows them, after the user confirms, and the
changelist as ``book_changelist``.
"""

from __future__ import annotations

from mcp_django.scopes import Scope
from mcp_django.toolsets import AdminActionsToolset, APIToolset, ModelToolset, NinjaToolset

from .api import BookViewSet, CatalogueStatsView
from .models import Book
from .ninja_api import api as ninja_api


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


class BookAPITools(APIToolset):
    """The DRF viewset over the books, as tools."""

    id = "demo.book_api"
    name = "Book API"
    view = BookViewSet
    basename = "api_book"
    plural = "api_books"
    actions = ["list", "retrieve", "create", "partial_update"]


class CatalogueStatsTools(APIToolset):
    """A plain DRF APIView, as a tool."""

    id = "demo.catalogue_stats"
    name = "Catalogue stats"
    view = CatalogueStatsView
    basename = "catalogue_stats"


class BookNinjaTools(NinjaToolset):
    """The django-ninja API over the books, as tools (docs/ninja.md)."""

    id = "demo.book_ninja"
    name = "Book API (Ninja)"
    api = ninja_api
    write_scope = Scope.TEAM  # suggest_book only for TEAM callers; its own check wants demo.add_book


class BookAdminActions(AdminActionsToolset):
    """The book admin's actions, as tools (docs/admin-actions.md)."""

    id = "demo.book_admin_actions"
    name = "Book admin actions"
    model = Book
    max_objects = 20
    changelist = True  # book_changelist: the admin's list as a read tool
