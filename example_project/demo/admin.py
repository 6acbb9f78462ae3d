from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from .models import Book


@admin.action(description="Clear the summaries", permissions=["change"])
def clear_summaries(modeladmin: admin.ModelAdmin[Book], request: HttpRequest, queryset: QuerySet[Book]) -> None:
    """Blank the selected books' summaries (also a tool: ``toolsets.BookAdminActions``, docs/admin-actions.md)."""
    cleared = queryset.exclude(summary="").update(summary="")
    modeladmin.message_user(request, f"Cleared {cleared} summar{'y' if cleared == 1 else 'ies'}.")


clear_summaries.mcp_destructive = True  # type: ignore[attr-defined]  # read by AdminActionsToolset: confirm first


@admin.register(Book)
class BookAdmin(admin.ModelAdmin[Book]):
    list_display = ["title", "author", "year"]
    search_fields = ["title", "author"]
    list_filter = ["year"]
    actions: Any = [clear_summaries]
