"""Helpers of the events tests: 2026-07-28 requests to an endpoint, and a Book saved the way the admin does."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
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


def until(condition: Callable[[], bool], wait: float = 10) -> bool:
    """Whether `condition()` came true within `wait` seconds (checked every 20 ms): a bounded wait, not a sleep."""
    deadline = time.monotonic() + wait
    pause = threading.Event()
    while not condition():
        if time.monotonic() > deadline:
            return False
        pause.wait(0.02)
    return True
