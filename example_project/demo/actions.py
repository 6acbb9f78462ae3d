"""The demo's command bus: catalogue actions that views and MCP clients dispatch alike.

``DemoConfig.mcp_bus_modules`` names this module, so its actions are registered when Django starts.
``providers.CatalogueReading`` and ``providers.CatalogueEditing`` expose them on the adapter endpoint
(``/mcp/adapter``) as tools taking ``{target, payload}``; a dispatch from an MCP client carries
``metadata.origin == "agent"``, one from Python code (a view, the shell) carries no origin.
"""

from __future__ import annotations

import logging
from typing import Any

from django.db.models import Count, Max, Min
from pydantic import BaseModel, ConfigDict, Field

from mcp_django.bus import ActionError, Bus, CallNext, Command, Empty, Err, Metadata, Ok

from .models import Book

logger = logging.getLogger("example_project.demo")

bus = Bus("demo")


class BookRef(BaseModel):
    """Which book."""

    model_config = ConfigDict(extra="forbid")

    id: int = Field(ge=1, description="The book's id (see search_books on /mcp, or catalogue.stats).")


class Rename(BaseModel):
    """The new title."""

    model_config = ConfigDict(extra="forbid")

    title: str = Field(min_length=1, max_length=200)


class Describe(BaseModel):
    """The new summary."""

    model_config = ConfigDict(extra="forbid")

    summary: str = Field(max_length=2000, description="What the book is about; empty clears it.")


def _book(target: BookRef) -> Book:
    try:
        return Book.objects.get(pk=target.id)
    except Book.DoesNotExist:
        raise ActionError(f"No book has the id {target.id}.", code="not_found") from None


@bus.action("catalogue.book.rename", target=BookRef, payload=Rename, title="Rename a book")
def rename(target: BookRef, payload: Rename, meta: Metadata) -> dict[str, Any]:
    """Give a book of the catalogue a new title."""
    book = _book(target)
    previous, book.title = book.title, payload.title
    book.save(update_fields=["title"])
    return {"id": book.pk, "title": book.title, "previous": previous}


@bus.action("catalogue.book.describe", target=BookRef, payload=Describe, title="Describe a book")
def describe(target: BookRef, payload: Describe, meta: Metadata) -> dict[str, Any]:
    """Replace the summary of a book of the catalogue."""
    book = _book(target)
    book.summary = payload.summary
    book.save(update_fields=["summary"])
    return {"id": book.pk, "title": book.title, "summary": book.summary}


@bus.action("catalogue.stats", title="Catalogue statistics")
async def stats(target: Empty, payload: Empty, meta: Metadata) -> dict[str, Any]:
    """Count the books and authors of the catalogue, and give the range of publication years."""
    figures = await Book.objects.aaggregate(
        books=Count("pk"), authors=Count("author", distinct=True), oldest=Min("year"), newest=Max("year")
    )
    return {**figures, "ids": [pk async for pk in Book.objects.order_by("pk").values_list("pk", flat=True)]}


@bus.use
async def log_dispatch(command: Command, call_next: CallNext) -> Ok[Any] | Err:
    """Log every dispatch with its origin: the demo's own audit, beside the MCP audit trail."""
    result = await call_next(command)
    logger.info(
        "bus %s by %s (origin %s): %s",
        command.action,
        getattr(command.metadata.user, "username", None),
        command.metadata.origin or "local",
        "ok" if isinstance(result, Ok) else result.code,
    )
    return result
