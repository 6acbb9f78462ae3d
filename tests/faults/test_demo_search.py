"""The demo's `search_books`: one query whatever the words, and caps on words and length (issue 13.5)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from example_project.demo.mcp import SEARCH_MAX_CHARS, SEARCH_MAX_WORDS
from example_project.demo.models import Book
from mcp_django.testing import MCPTestClient, assert_tool_error, assert_tool_result, result_text

pytestmark = pytest.mark.django_db(transaction=True)


def test_every_word_must_match_in_the_title_or_the_author(django_user_model):
    user = django_user_model.objects.create(username="reader")
    Book.objects.create(title="The Dispossessed", author="Ursula K. Le Guin", year=1974)
    Book.objects.create(title="The Left Hand of Darkness", author="Ursula K. Le Guin", year=1969)
    Book.objects.create(title="Dune", author="Frank Herbert", year=1965)
    client = MCPTestClient("mcp_django.default_registry", user=user)

    result = client.sync.call_tool("search_books", {"query": "guin darkness"})

    found = result_text(assert_tool_result(result))
    assert found.split(" ", 1)[1] == "The Left Hand of Darkness (Ursula K. Le Guin, 1969)"


def test_a_query_of_the_most_words_is_one_sql_query_growing_with_the_words(django_user_model):
    # Before the fix each word OR-ed two filtered copies of the queryset: 8 words were 510 LIKEs, 16 took 22 s.
    user = django_user_model.objects.create(username="reader")
    client = MCPTestClient("mcp_django.default_registry", user=user)
    words = [f"w{index}" for index in range(SEARCH_MAX_WORDS)]

    with CaptureQueriesContext(connection) as queries:
        result = client.sync.call_tool("search_books", {"query": " ".join(words)})

    searches = [query["sql"] for query in queries.captured_queries if "demo_book" in query["sql"]]
    assert_tool_result(result)
    assert len(searches) == 1
    assert searches[0].count("LIKE") == 2 * SEARCH_MAX_WORDS


def test_more_words_than_the_cap_are_refused_before_any_query(django_user_model):
    user = django_user_model.objects.create(username="reader")
    client = MCPTestClient("mcp_django.default_registry", user=user)
    query = " ".join(["word"] * 200_000)[:SEARCH_MAX_CHARS]

    with CaptureQueriesContext(connection) as queries:
        result = client.sync.call_tool("search_books", {"query": query})

    assert assert_tool_error(result) == f"Search for at most {SEARCH_MAX_WORDS} words, not {len(query.split())}."
    assert not [query for query in queries.captured_queries if "demo_book" in query["sql"]]


def test_a_query_longer_than_the_cap_is_invalid_arguments(django_user_model):
    user = django_user_model.objects.create(username="reader")
    client = MCPTestClient("mcp_django.default_registry", user=user)

    result = client.sync.call_tool("search_books", {"query": "word " * 200_000})

    assert_tool_error(result, match=r"^Invalid arguments for tool search_books: query: String should have at most")
