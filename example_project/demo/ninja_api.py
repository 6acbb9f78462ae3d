"""A small django-ninja API over the demo's books, published as MCP tools by ``toolsets.py`` (docs/ninja.md).

Routed over HTTP at ``/ninja/`` too (``example_project/urls.py``); as tools, its operations keep their
own authentication (``django_auth``: the MCP caller is ``request.user``; ``staff_report`` only for
staff), their validation (422) and their ``HttpError``s.
"""

from __future__ import annotations

import datetime

from django.db.models import Count
from django.http import HttpRequest
from django.shortcuts import get_object_or_404
from ninja import Field, NinjaAPI, Query, Schema, Status
from ninja.errors import HttpError
from ninja.security import SessionAuthIsStaff, django_auth

from .models import Book

api = NinjaAPI(title="Demo catalogue (Ninja)", urls_namespace="demo-ninja", auth=django_auth)


class BookOut(Schema):
    """A book of the catalogue."""

    id: int
    title: str
    author: str
    year: int


class BookIn(Schema):
    """A book to suggest for the catalogue."""

    title: str = Field(min_length=1, max_length=200)
    author: str = Field(min_length=1, max_length=200)
    year: int = Field(ge=1, description="The year it came out; not in the future.")


class BookFilter(Schema):
    author: str | None = Field(None, description="Part of the author's name.")
    before: int | None = Field(None, description="Only books from before this year.")


class Report(Schema):
    books: int
    authors: int
    asked_by: str


@api.get("/books", response=list[BookOut])
def find_books(request: HttpRequest, filters: Query[BookFilter]) -> list[Book]:
    """Find books by author or year."""
    books = Book.objects.order_by("title")
    if filters.author:
        books = books.filter(author__icontains=filters.author)
    if filters.before:
        books = books.filter(year__lt=filters.before)
    return list(books)


@api.get("/books/{book_id}", response=BookOut)
def read_book(request: HttpRequest, book_id: int) -> Book:
    """Read one book by its id."""
    return get_object_or_404(Book, pk=book_id)


@api.post("/books", response={201: BookOut})
def suggest_book(request: HttpRequest, payload: BookIn) -> Status[Book]:
    """Suggest a book for the catalogue (needs the demo.add_book permission)."""
    if not request.user.has_perm("demo.add_book"):
        raise HttpError(403, "Adding books needs the demo.add_book permission.")
    if payload.year > datetime.date.today().year:
        raise HttpError(400, "A catalogued book cannot come from the future.")
    if Book.objects.filter(title__iexact=payload.title).exists():
        raise HttpError(409, f"The catalogue already has {payload.title!r}.")
    return Status(201, Book.objects.create(**payload.dict()))


@api.get("/report", response=Report, auth=SessionAuthIsStaff())
def staff_report(request: HttpRequest) -> dict[str, object]:
    """How many books and authors the catalogue holds (staff only)."""
    counted = Book.objects.aggregate(books=Count("id"), authors=Count("author", distinct=True))
    return {**counted, "asked_by": request.user.get_username()}
