"""Helpers of the events tests: 2026-07-28 requests to an endpoint, and a Book saved the way the admin does."""

from __future__ import annotations

import json
from typing import Any

from django.test import Client

from example_project.demo.models import Book
from tests.http_support import post, stateless, stateless_headers


def call(
    client: Client, method: str, params: dict[str, Any] | None = None, *, path: str = "/books/mcp", **headers: str
) -> dict[str, Any]:
    """Send one 2026-07-28 request and return its JSON-RPC response."""
    response = post(client, stateless(method, params), stateless_headers(method, **headers), path=path)
    answer: dict[str, Any] = json.loads(response.content)
    return answer


def add_book(title: str = "Dune", author: str = "Frank Herbert", year: int = 1965) -> Book:
    return Book.objects.create(title=title, author=author, year=year)
