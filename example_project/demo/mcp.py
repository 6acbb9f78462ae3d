"""The demo catalogue's MCP tools, resources and prompts, served on the default endpoint (``/mcp``).

mcp_django loads this module when Django starts (every installed app's ``mcp.py``), so the decorators
below are all it takes to publish them.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Annotated, Any

from django.db.models import Q
from pydantic import BaseModel, Field

import mcp_django
from mcp_django import Context, content
from mcp_django.events import emit_on_save, event
from mcp_django.safety.approvals import Approval, cascade
from mcp_django.scopes import Scope

from .forms import RatingForm
from .models import Book


class BookInfo(BaseModel):
    """One book of the catalogue."""

    id: int
    title: str
    author: str
    year: int


class CatalogueStats(BaseModel):
    """Counts over the whole catalogue."""

    books: int = Field(description="How many books the catalogue holds")
    authors: int = Field(description="How many distinct authors wrote them")
    oldest: BookInfo | None = Field(description="The book published first, if any")
    newest: BookInfo | None = Field(description="The book published last, if any")


def _info(book: Book) -> BookInfo:
    return BookInfo(id=book.pk, title=book.title, author=book.author, year=book.year)


def _as_json(book: Book) -> str:
    return json.dumps({**_info(book).model_dump(), "summary": book.summary})


SEARCH_MAX_WORDS = 8
"""Words `search_books` looks for at most: each word is one more condition in one query."""

SEARCH_MAX_CHARS = 200
"""The longest query `search_books` accepts (longer ones are refused before anything runs)."""


@mcp_django.tool(annotations={"readOnlyHint": True})
def search_books(
    query: Annotated[
        str, Field(max_length=SEARCH_MAX_CHARS, description="Words to look for in titles and authors (at most 8)")
    ] = "",
    limit: Annotated[int, Field(ge=1, le=50, description="At most this many books")] = 10,
) -> str:
    """Search the catalogue by title or author and list the matching books, one per line."""
    words = query.split()
    if len(words) > SEARCH_MAX_WORDS:
        raise mcp_django.ToolError(f"Search for at most {SEARCH_MAX_WORDS} words, not {len(words)}.")
    # One condition per word, all in one WHERE clause: the query grows with the words, never doubles.
    matches = Q()
    for word in words:
        matches &= Q(title__icontains=word) | Q(author__icontains=word)
    lines = [f"#{book.pk} {book}" for book in Book.objects.filter(matches).order_by("title", "pk")[:limit]]
    return "\n".join(lines) if lines else f"No book matches {query!r}."


@mcp_django.tool(annotations={"readOnlyHint": True})
def books_by(
    author: Annotated[str, Field(max_length=SEARCH_MAX_CHARS, description="Any part of the author's name")],
) -> list[BookInfo]:
    """The books of one author, oldest first (the quickstart's tool of that name, on the demo's catalogue)."""
    return [_info(book) for book in Book.objects.filter(author__icontains=author).order_by("year", "title")[:50]]


@mcp_django.tool(annotations={"readOnlyHint": True})
def catalogue_stats() -> CatalogueStats:
    """Count the books and authors in the catalogue and name the oldest and newest book."""
    books = Book.objects.order_by("year", "title")
    oldest, newest = books.first(), books.last()
    return CatalogueStats(
        books=books.count(),
        authors=books.values("author").distinct().count(),
        oldest=_info(oldest) if oldest else None,
        newest=_info(newest) if newest else None,
    )


BOOK_CARD = mcp_django.App(
    "demo/book_card.html",
    title="Book card",
    description="One book of the catalogue as a card, with a button listing the author's other books.",
    prefers_border=True,
)
"""The view of `show_book` for hosts of MCP Apps (docs/apps.md): a template of this app."""


@mcp_django.tool(annotations={"readOnlyHint": True}, app=BOOK_CARD)
def show_book(book_id: Annotated[int, Field(description="The book's id, as search_books lists it")]) -> BookInfo:
    """Show one book of the catalogue: its title, author and year (as a card in hosts of MCP Apps)."""
    book = Book.objects.filter(pk=book_id).first()
    if book is None:
        raise mcp_django.ToolError(f"No book has the id {book_id}.")
    return _info(book)


@mcp_django.tool(annotations={"readOnlyHint": True})
def rate_book(
    ctx: Context, book_id: Annotated[int, Field(description="The book's id, as search_books lists it")]
) -> str:
    """Ask the user to rate one book of the catalogue: a Django form asked through elicitation (docs/forms.md)."""
    book = Book.objects.filter(pk=book_id).first()
    if book is None:
        raise mcp_django.ToolError(f"No book has the id {book_id}.")
    answer = ctx.elicit_form_sync(RatingForm, message=f"How did you like {book.title}?")
    if answer.form is None:
        return f"No rating for {book.title} (the user chose {answer.action})."
    rating = answer.form.cleaned_data
    comment = f": {rating['comment']}" if rating["comment"] else "."
    return f"You gave {book.title} {rating['stars']} of 5 stars{comment}"


@mcp_django.tool(annotations={"readOnlyHint": True, "idempotentHint": True}, scope=Scope.TEAM)
async def reindex_catalogue(
    ctx: Context,
    steps: Annotated[int, Field(ge=1, le=20, description="How many batches to work in")] = 4,
) -> str:
    """Rebuild the (pretend) search index in batches, reporting progress after each batch (teams only)."""
    await ctx.info(f"reindexing in {steps} batches")
    for done in range(1, steps + 1):
        await asyncio.sleep(0.01)  # stands in for real work between progress reports
        await ctx.report_progress(done, steps, f"batch {done} of {steps}")
    return f"Reindexed the catalogue in {steps} batches."


@mcp_django.tool(annotations={"readOnlyHint": True}, task="optional")
async def catalogue_report(
    ctx: Context,
    seconds: Annotated[int, Field(ge=0, le=600, description="How long the report takes, a step a second")] = 5,
) -> str:
    """Write a long report on the catalogue; runs as a task for clients that take tasks (docs/tasks.md)."""
    for step in range(seconds):
        await ctx.report_progress(step, seconds, f"step {step + 1} of {seconds}")
        await asyncio.sleep(1)  # stands in for real work
    return f"Report: {await Book.objects.acount()} books in the catalogue."


class NewBook(BaseModel):
    """A book to add to the catalogue."""

    title: Annotated[str, Field(min_length=1, max_length=200)]
    author: Annotated[str, Field(min_length=1, max_length=200)]
    year: Annotated[int, Field(ge=0, description="The year it was published")]


IMPORT_MAX_BOOKS = 50
"""The most books one `import_books` call adds."""


@mcp_django.tool(permissions="demo.add_book", annotations={"destructiveHint": False}, atomic=True)
def import_books(
    books: Annotated[list[NewBook], Field(min_length=1, max_length=IMPORT_MAX_BOOKS, description="The books to add")],
) -> str:
    """Add several books to the catalogue, all or none: one that cannot be added leaves the catalogue as it was.

    Needs the demo.add_book permission. The call is one transaction (atomic=True), whether or not the project
    sets ATOMIC_REQUESTS: the books added before the failing one are rolled back (docs/declarations.md).
    """
    for number, book in enumerate(books, 1):
        if Book.objects.filter(title__iexact=book.title).exists():
            raise mcp_django.ToolError(f"Book {number}, {book.title!r}, is already in the catalogue: nothing added.")
        Book.objects.create(title=book.title, author=book.author, year=book.year)
    return f"Added {len(books)} books to the catalogue."


def _retiring(arguments: Mapping[str, Any], ctx: object) -> dict[str, Any]:
    """What the librarian approving `retire_author` sees: the rows the delete takes with it, per model."""
    return {"deletes": cascade(Book.objects.filter(author=arguments.get("author", "")))}


@mcp_django.tool(
    approval=Approval("demo.delete_book", preview=_retiring), annotations={"destructiveHint": True}, atomic=True
)
def retire_author(author: Annotated[str, Field(min_length=1, max_length=200, description="The author")]) -> str:
    """Remove every book by one author from the catalogue. Runs only once a librarian approves it in the admin
    (someone holding demo.delete_book): the call answers a task that completes then (docs/side-effects.md)."""
    _, deleted = Book.objects.filter(author=author).delete()
    return f"Removed {deleted.get('demo.Book', 0)} book(s) by {author}."


@mcp_django.tool(permissions="demo.curate_book")
def curate_book(
    book_id: Annotated[int, Field(description="The book's id")],
    summary: Annotated[str, Field(min_length=1, max_length=2000, description="The new summary")],
) -> str:
    """Rewrite a book's summary; only curators (the demo.curate_book permission, alice in the demo) see this tool."""
    updated = Book.objects.filter(pk=book_id).update(summary=summary)
    if not updated:
        raise mcp_django.ToolError(f"No book has id {book_id}.")
    return f"The summary of book #{book_id} is rewritten."


@mcp_django.resource("demo://books", name="books", mime_type="application/json")
def all_books() -> str:
    """Every book of the catalogue as a JSON list."""
    return json.dumps([_info(book).model_dump() for book in Book.objects.all()])


@mcp_django.resource("demo://books/{book_id}", name="book", mime_type="application/json")
def one_book(book_id: int) -> str | None:
    """One book of the catalogue, with its summary, as JSON (None: no such book, "resource not found")."""
    book = Book.objects.filter(pk=book_id).first()
    return _as_json(book) if book else None


@mcp_django.prompt
def review_book(
    title: Annotated[str, Field(description="The title of a book in the catalogue")],
) -> list[content.PromptMessage]:
    """Ask the model to review one book of the catalogue."""
    book = Book.objects.filter(title=title).first()
    about = f"{book} — {book.summary}" if book else f"{title!r} (not in the catalogue)"
    return [content.user_message(f"Write a short, fair review of this book: {about}")]


@mcp_django.completion(prompt="review_book", argument="title")
def complete_title(value: str) -> list[str]:
    """Titles of the catalogue that start with what the user typed."""
    return list(Book.objects.filter(title__istartswith=value).values_list("title", flat=True)[:20])


# -- Events (docs/events.md) -------------------------------------------------------------------------------
# `book.added` whenever a book is saved for the first time: in the admin, by a tool, in a shell. Clients
# poll it (events/poll), hold a push stream (events/stream) or subscribe a signed webhook (events/subscribe).


@event("book.added")
def book_added(book: BookInfo, author: str | None = None) -> bool:
    """A book was added to the catalogue.

    Args:
        author: only books by this author.
    """
    return author is None or book.author == author


emit_on_save(
    Book, "book.added", lambda book: BookInfo(id=book.pk, title=book.title, author=book.author, year=book.year)
)
