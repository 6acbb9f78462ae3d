"""Django values out of tools: QuerySets and model instances evaluated in the tool's thread, and returned as
structured content with an output schema from the model's fields (or the pydantic model the tool names)."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import Permission
from django.db.models import QuerySet
from pydantic import BaseModel
from rest_framework import serializers

from example_project.demo.models import Book
from mcp_django import Registry, ToolProvider
from mcp_django.endpoints import Endpoint
from mcp_django.testing import MCPTestClient

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.parametrize("era", ["handshake", "stateless"])]

registry = Registry("django-values")


@registry.tool
def titles() -> Any:
    """Every title, as values() rows."""
    return Book.objects.values("title")


@registry.tool
def oldest() -> Book | None:
    """The oldest book."""
    return Book.objects.order_by("year").first()


@registry.tool
def by_author(author: str) -> list[Book]:
    """An author's books, oldest first."""
    return Book.objects.filter(author=author).order_by("year")  # type: ignore[return-value]  # a QuerySet is welcome


@registry.tool
async def newest_two() -> QuerySet[Book]:
    """The two newest books (an async tool returning a lazy QuerySet)."""
    return Book.objects.order_by("-year")[:2]


class BookInfo(BaseModel):
    """A book, as the model is shown it."""

    title: str
    year: int


@registry.tool
def infos() -> list[BookInfo]:
    """Books, through a pydantic model of the tool's choosing."""
    return Book.objects.order_by("year")  # type: ignore[return-value]  # the rows' fields fill the model


@registry.tool
def permission(codename: str) -> Permission:
    """A permission: a model with a foreign key."""
    return Permission.objects.get(codename=codename)


class BookSerializer(serializers.ModelSerializer[Book]):
    """A book, as the API shows it."""

    label = serializers.SerializerMethodField()
    added_by = serializers.CharField(write_only=True, required=False)

    class Meta:
        model = Book
        fields = ["id", "title", "year", "label", "added_by"]

    def get_label(self, book: Book) -> str:
        return f"{book.title} ({book.year})"


@registry.tool
def serialized(author: str) -> list[BookSerializer]:
    """An author's books through a DRF serializer the tool names (a QuerySet, serialized in the tool's thread)."""
    return Book.objects.filter(author=author).order_by("year")  # type: ignore[return-value]  # serialized


@registry.tool
def one_serialized(title: str) -> BookSerializer:
    """One book, returned as the serializer."""
    return BookSerializer(Book.objects.get(title=title))


class CatalogueTools(ToolProvider):
    """A provider whose sync and async tools return QuerySets."""

    id = "tests.catalogue"

    def list_tools(self, ctx: Any) -> list[dict[str, Any]]:
        return [
            {"name": name, "description": "Every title.", "inputSchema": {"type": "object"}}
            for name in ("provider_titles", "provider_titles_async")
        ]

    def call_tool(self, name: str, arguments: dict[str, Any], ctx: Any) -> Any:
        return Book.objects.values_list("title", flat=True)


class AsyncCatalogueTools(CatalogueTools):
    id = "tests.catalogue_async"

    async def call_tool(self, name: str, arguments: dict[str, Any], ctx: Any) -> Any:
        return Book.objects.values_list("title", flat=True)


@pytest.fixture
def books() -> None:
    Book.objects.bulk_create(
        [
            Book(title="Dune", author="Frank Herbert", year=1965, summary="Spice."),
            Book(title="Children of Dune", author="Frank Herbert", year=1976),
            Book(title="Kindred", author="Octavia E. Butler", year=1979),
        ]
    )


def client(era: str) -> MCPTestClient:
    return MCPTestClient(registry, era=era)  # type: ignore[arg-type]  # parametrized with the two era names


async def tools(era: str) -> dict[str, dict[str, Any]]:
    listed = await client(era).list_tools()
    return {tool["name"]: tool for tool in listed}


async def test_a_lazy_queryset_is_evaluated_in_the_tools_thread(era: str, books: None) -> None:
    result = await client(era).call_tool("titles", {})

    assert not result.get("isError"), result
    assert [block["text"] for block in result["content"]] == [
        '{"title":"Children of Dune"}',
        '{"title":"Dune"}',
        '{"title":"Kindred"}',
    ]


async def test_a_model_return_type_publishes_the_schema_of_its_fields(era: str) -> None:
    schema = (await tools(era))["oldest"]["outputSchema"]

    book, null = schema["properties"]["result"]["anyOf"]  # the model, used once, in its place
    assert null == {"type": "null"}
    assert "$defs" not in schema
    assert {name: spec["type"] for name, spec in book["properties"].items()} == {
        "id": "integer",
        "title": "string",
        "author": "string",
        "year": "integer",
        "summary": "string",
    }
    assert not any("description" in spec for spec in book["properties"].values())  # verbose names repeat names
    assert book["description"] == "A book in the demo catalogue, read by the demo MCP tools and resources."


async def test_a_model_instance_is_structured_content(era: str, books: None) -> None:
    result = await client(era).call_tool("oldest", {})

    structured = result["structuredContent"]["result"]
    assert {key: structured[key] for key in ("title", "author", "year", "summary")} == {
        "title": "Dune",
        "author": "Frank Herbert",
        "year": 1965,
        "summary": "Spice.",
    }
    assert isinstance(structured["id"], int)


async def test_a_queryset_returned_as_a_list_of_models_is_structured(era: str, books: None) -> None:
    schema = (await tools(era))["by_author"]["outputSchema"]

    result = await client(era).call_tool("by_author", {"author": "Frank Herbert"})

    assert schema["properties"]["result"]["type"] == "array"
    assert [book["title"] for book in result["structuredContent"]["result"]] == ["Dune", "Children of Dune"]


async def test_an_async_tools_queryset_is_evaluated_off_the_event_loop(era: str, books: None) -> None:
    result = await client(era).call_tool("newest_two", {})

    assert not result.get("isError"), result
    assert [book["title"] for book in result["structuredContent"]["result"]] == ["Kindred", "Children of Dune"]


async def test_a_pydantic_model_the_tool_names_picks_the_fields(era: str, books: None) -> None:
    result = await client(era).call_tool("infos", {})

    assert result["structuredContent"] == {
        "result": [
            {"title": "Dune", "year": 1965},
            {"title": "Children of Dune", "year": 1976},
            {"title": "Kindred", "year": 1979},
        ]
    }


async def test_a_relation_is_the_related_rows_key(era: str) -> None:
    schema = (await tools(era))["permission"]["outputSchema"]
    result = await client(era).call_tool("permission", {"codename": "add_book"})

    assert schema["properties"]["content_type"]["type"] == "integer"
    assert result["structuredContent"]["codename"] == "add_book"
    expected = await Permission.objects.aget(codename="add_book")
    assert result["structuredContent"]["content_type"] == expected.content_type_id


async def test_a_drf_serializer_the_tool_names_gives_the_schema_and_the_data(era: str, books: None) -> None:
    schema = (await tools(era))["serialized"]["outputSchema"]

    result = await client(era).call_tool("serialized", {"author": "Frank Herbert"})

    book = schema["properties"]["result"]["items"]  # the serializer's model, used once, in its place
    assert set(book["properties"]) == {"id", "title", "year", "label"}  # write-only fields are not output
    assert book["properties"]["year"]["type"] == "integer"
    assert book["description"] == "A book, as the API shows it."
    assert [(row["title"], row["label"]) for row in result["structuredContent"]["result"]] == [
        ("Dune", "Dune (1965)"),
        ("Children of Dune", "Children of Dune (1976)"),
    ]


async def test_a_returned_serializer_is_its_data(era: str, books: None) -> None:
    result = await client(era).call_tool("one_serialized", {"title": "Kindred"})

    assert not result.get("isError"), result
    assert result["structuredContent"]["label"] == "Kindred (1979)"


@pytest.mark.parametrize("provider", [CatalogueTools, AsyncCatalogueTools])
async def test_a_providers_queryset_is_evaluated_where_the_orm_may_run(era: str, provider: type, books: None) -> None:
    endpoint = Endpoint("catalogue/mcp", name="catalogue", mode="adapter", providers=[provider], allow_anonymous=True)
    mcp = MCPTestClient(endpoint, era=era)  # type: ignore[arg-type]  # parametrized with the two era names

    result = await mcp.call_tool("provider_titles", {})

    assert not result.get("isError"), result
    assert [block["text"] for block in result["content"]] == ["Children of Dune", "Dune", "Kindred"]
