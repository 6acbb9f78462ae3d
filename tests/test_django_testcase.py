"""docs/testing.md's Django `TestCase` example, as written there: `MCPTestClient` in an async test method."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.test import TestCase

from example_project.demo.models import Book
from mcp_django.testing import MCPTestClient, assert_tool_result


class SearchBooksTests(TestCase):
    user: Any

    @classmethod
    def setUpTestData(cls) -> None:
        cls.user = get_user_model().objects.create_user("ada")
        Book.objects.create(title="Dune", author="Frank Herbert", year=1965)

    async def test_search_finds_a_book(self) -> None:
        client = MCPTestClient("mcp_django.default_registry", user=self.user)
        result = await client.call_tool("search_books", {"query": "dune"})
        assert_tool_result(result, text="Dune")
