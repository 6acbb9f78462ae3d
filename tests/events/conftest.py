"""Fixtures of the events tests."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from mcp_django.events import event, event_types


@pytest.fixture
def curated() -> Iterator[None]:
    """`book.curated`, an event type only holders of `demo.curate_book` may see."""

    @event("book.curated", permissions=["demo.curate_book"])
    def book_curated(book: dict[str, Any]) -> bool:
        """A curator touched a book."""
        return True

    try:
        yield
    finally:
        event_types.remove("book.curated")
