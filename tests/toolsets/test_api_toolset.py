"""`APIToolset`: DRF viewsets and API views as tools, run through the view with the MCP caller as the user.

The demo's `BookAPITools` and `CatalogueStatsTools` on the adapter endpoint, and views of the tests' own
(a throttled viewset, a searchable and paginated one) on an endpoint of their own.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Callable, Iterator
from typing import Any

import django_filters
import pytest
from django.core.cache import cache
from django.test import override_settings
from django_filters.rest_framework import DjangoFilterBackend
from rest_framework import filters, generics, pagination, permissions, serializers, throttling, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from example_project.demo.api import BookSerializer
from example_project.demo.models import Book
from mcp_django.endpoints import Endpoint
from mcp_django.testing import MCPTestClient, assert_tool_error, assert_tool_result
from mcp_django.toolsets import APIToolset
from mcp_django.toolsets.checks import toolset_messages

ADAPTER = "mcp/adapter"


class TwoPerMinute(throttling.UserRateThrottle):
    rate = "2/minute"


class ThrottledBooks(viewsets.ReadOnlyModelViewSet[Book]):
    queryset = Book.objects.all()
    serializer_class = BookSerializer
    throttle_classes = [TwoPerMinute]


class Pages(pagination.PageNumberPagination):
    page_size = 2


class SearchableBooks(viewsets.ReadOnlyModelViewSet[Book]):
    """Books to search."""

    queryset = Book.objects.order_by("title")
    serializer_class = BookSerializer
    permission_classes = [permissions.IsAuthenticated]
    filter_backends = [filters.SearchFilter]
    search_fields = ["title", "author"]
    pagination_class = Pages


class ThrottledTools(APIToolset):
    id = "tests.toolsets.throttled"
    view = ThrottledBooks
    basename = "throttled_book"
    actions = ["retrieve"]


class SearchTools(APIToolset):
    id = "tests.toolsets.search"
    view = SearchableBooks
    basename = "found_book"
    actions = ["list"]


class BookFilter(django_filters.FilterSet):
    era = django_filters.ChoiceFilter(
        field_name="year", lookup_expr="lt", choices=[(1970, "before 1970"), (2000, "before 2000")]
    )
    years = django_filters.NumberFilter(field_name="year", lookup_expr="gte", label="From year")
    order = django_filters.OrderingFilter(fields=["year", "title"])

    class Meta:
        model = Book
        fields = {"author": ["exact", "icontains"], "year": ["in"]}


class FilteredBooks(viewsets.ReadOnlyModelViewSet[Book]):
    queryset = Book.objects.order_by("title")
    serializer_class = BookSerializer
    filter_backends = [DjangoFilterBackend]
    filterset_class = BookFilter


class FieldFilteredBooks(viewsets.ReadOnlyModelViewSet[Book]):
    queryset = Book.objects.order_by("title")
    serializer_class = BookSerializer
    filter_backends = [DjangoFilterBackend, filters.SearchFilter]
    filterset_fields = ["author", "year"]
    search_fields = ["title"]


class FilterTools(APIToolset):
    id = "tests.toolsets.filtered"
    view = FilteredBooks
    basename = "filtered_book"
    actions = ["list"]


class FieldFilterTools(APIToolset):
    id = "tests.toolsets.field_filtered"
    view = FieldFilteredBooks
    basename = "field_filtered_book"
    actions = ["list"]


class Summary(serializers.Serializer[Any]):
    summary = serializers.CharField(max_length=40)


class SummarisedBooks(viewsets.GenericViewSet[Book]):
    queryset = Book.objects.all()
    serializer_class = BookSerializer

    @action(detail=True, methods=["post"], serializer_class=Summary)
    def summarise(self, request: Request, pk: str | None = None) -> Response:
        """Set a book's summary."""
        book = self.get_object()
        given = Summary(data=request.data)
        given.is_valid(raise_exception=True)
        book.summary = given.validated_data["summary"]
        book.save(update_fields=["summary"])
        return Response({"id": book.pk, "summary": book.summary, "by": request.user.get_username()})


class BookCreateView(generics.CreateAPIView[Book]):
    serializer_class = BookSerializer
    permission_classes = [permissions.IsAuthenticated]


class ActionTools(APIToolset):
    id = "tests.toolsets.actions"
    view = SummarisedBooks
    actions = ["summarise"]


class CreateViewTools(APIToolset):
    id = "tests.toolsets.create_view"
    view = BookCreateView
    basename = "new_book"


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    cache.clear()  # the throttles' history
    providers = [ThrottledTools, SearchTools, ActionTools, CreateViewTools, FilterTools, FieldFilterTools]
    yield Endpoint("tests/api/mcp", name="tests-api", mode="adapter", providers=providers)
    cache.clear()
    gc.collect()


async def test_the_view_s_own_permission_refusal_is_an_error_result_with_its_message(
    mcp_client: Callable[..., MCPTestClient], books: list[Book], reader: Any
) -> None:
    client = mcp_client(ADAPTER, user=reader)  # view_book only: DjangoModelPermissions refuses a POST

    listed = assert_tool_result(await client.call_tool("list_api_books"))
    assert "Dune" in listed["content"][0]["text"]
    refused = await client.call_tool("create_api_book", {"title": "Solaris", "author": "Stanisław Lem", "year": 1961})
    assert_tool_error(refused, "^403 Forbidden: You do not have permission to perform this action.$")
    assert not await Book.objects.filter(title="Solaris").aexists()


async def test_the_serializer_s_validation_errors_are_error_results_and_valid_writes_are_saved(
    mcp_client: Callable[..., MCPTestClient], books: list[Book], editor: Any
) -> None:
    client = mcp_client(ADAPTER, user=editor)

    future = await client.call_tool("create_api_book", {"title": "Later", "author": "Someone", "year": 3000})
    assert_tool_error(future, "^400 Bad Request: year: A catalogued book cannot come from the future.$")
    blank = await client.call_tool("update_api_book", {"id": books[0].pk, "title": ""})
    assert_tool_error(blank, "^400 Bad Request: title: This field may not be blank.$")

    created = await client.call_tool("create_api_book", {"title": "Solaris", "author": "Stanisław Lem", "year": 1961})
    row = assert_tool_result(created)["structuredContent"]
    assert row == {"id": row["id"], "title": "Solaris", "author": "Stanisław Lem", "year": 1961, "summary": ""}
    changed = await client.call_tool("update_api_book", {"id": row["id"], "summary": "An ocean that thinks."})
    assert assert_tool_result(changed)["structuredContent"]["summary"] == "An ocean that thinks."
    assert (await Book.objects.aget(pk=row["id"])).summary == "An ocean that thinks."


async def test_a_missing_row_is_the_view_s_404(
    mcp_client: Callable[..., MCPTestClient], books: list[Book], reader: Any
) -> None:
    missing = await mcp_client(ADAPTER, user=reader).call_tool("get_api_book", {"id": 999_999})
    assert_tool_error(missing, "^404 Not Found: No Book matches the given query.$")


async def test_the_view_sees_the_mcp_caller_as_request_user(
    mcp_client: Callable[..., MCPTestClient], books: list[Book], reader: Any
) -> None:
    result = await mcp_client(ADAPTER, user=reader).call_tool("get_catalogue_stats")
    assert_tool_result(result, text='^{"books": 6, "authors": 5, "asked_by": "reader"}$')


async def test_the_view_s_throttle_applies_to_the_mcp_caller(
    mcp_client: Callable[..., MCPTestClient], endpoint: Endpoint, books: list[Book], reader: Any, editor: Any
) -> None:
    client = mcp_client(endpoint, user=reader)
    for _ in range(2):
        assert_tool_result(await client.call_tool("get_throttled_book", {"id": books[0].pk}))

    throttled = await client.call_tool("get_throttled_book", {"id": books[0].pk})
    assert_tool_error(throttled, r"^429 Too Many Requests: Request was throttled. Expected available in \d+ seconds?.$")
    other = await mcp_client(endpoint, user=editor).call_tool("get_throttled_book", {"id": books[0].pk})
    assert_tool_result(other)  # a user throttle: per caller


async def test_the_filter_backends_and_paginator_s_query_parameters_are_the_list_tool_s_arguments(
    mcp_client: Callable[..., MCPTestClient], endpoint: Endpoint, books: list[Book], reader: Any
) -> None:
    client = mcp_client(endpoint, user=reader)
    tool = next(tool for tool in await client.list_tools() if tool["name"] == "list_found_books")
    assert sorted(tool["inputSchema"]["properties"]) == ["page", "search"]
    assert tool["inputSchema"]["properties"]["page"]["type"] == "integer"
    assert tool["description"] == "List books."

    result = assert_tool_result(await client.call_tool("list_found_books", {"search": "le guin", "page": 1}))
    assert '"count": 2' in result["content"][0]["text"]
    assert_tool_error(await client.call_tool("list_found_books", {"page": 9}), "^404 Not Found: Invalid page.$")
    assert_tool_error(
        await client.call_tool("list_found_books", {"ordering": "-title"}),
        "^Invalid arguments for tool list_found_books: ordering: Extra inputs are not permitted$",
    )


async def test_a_list_s_next_link_names_the_path_the_project_routes_the_view_at(
    mcp_client: Callable[..., MCPTestClient], endpoint: Endpoint, books: list[Book], reader: Any
) -> None:
    with override_settings(ROOT_URLCONF="tests.toolsets.api_urls"):
        result = assert_tool_result(await mcp_client(endpoint, user=reader).call_tool("list_found_books", {"page": 1}))

    page = json.loads(result["content"][0]["text"])
    assert (page["next"], page["previous"]) == ("https://localhost/api/found-books/?page=2", None)


async def test_a_filterset_s_filters_are_typed_arguments_with_their_choices_and_lists(
    mcp_client: Callable[..., MCPTestClient], endpoint: Endpoint, books: list[Book], reader: Any
) -> None:
    client = mcp_client(endpoint, user=reader)
    tools = {tool["name"]: tool for tool in await client.list_tools()}
    properties = tools["list_filtered_books"]["inputSchema"]["properties"]
    assert sorted(properties) == ["author", "author__icontains", "era", "order", "year__in", "years"]
    assert properties["era"]["enum"] == [1970, 2000]
    assert (properties["years"]["type"], properties["years"]["description"]) == ("integer", "From year")
    assert properties["year__in"]["items"] == {"type": "integer"}
    assert set(properties["order"]["items"]["enum"]) == {"year", "-year", "title", "-title"}
    fields = tools["list_field_filtered_books"]["inputSchema"]["properties"]
    assert (sorted(fields), fields["year"]["type"]) == (["author", "search", "year"], "integer")

    found = await client.call_tool("list_filtered_books", {"year__in": [1969, 1974], "order": ["-year"]})
    assert [row["year"] for row in json.loads(assert_tool_result(found)["content"][0]["text"])] == [1974, 1969]
    early = await client.call_tool("list_filtered_books", {"era": 1970, "author__icontains": "herbert"})
    assert [row["title"] for row in json.loads(assert_tool_result(early)["content"][0]["text"])] == ["Dune"]
    wrong = await client.call_tool("list_field_filtered_books", {"year": "soon"})
    assert_tool_error(wrong, "^Invalid arguments for tool list_field_filtered_books: year: ")


async def test_a_viewset_s_extra_action_and_a_generic_api_view_s_post_are_tools(
    mcp_client: Callable[..., MCPTestClient], endpoint: Endpoint, books: list[Book], reader: Any
) -> None:
    client = mcp_client(endpoint, user=reader)
    tools = {tool["name"]: tool for tool in await client.list_tools()}
    assert tools["summarise_book"]["description"] == "Set a book's summary."
    assert sorted(tools["summarise_book"]["inputSchema"]["required"]) == ["id", "summary"]
    assert sorted(tools["post_new_book"]["inputSchema"]["required"]) == ["author", "title", "year"]

    done = await client.call_tool("summarise_book", {"id": books[0].pk, "summary": "Spice."})
    assert_tool_result(done, text=f'^{{"id": {books[0].pk}, "summary": "Spice.", "by": "reader"}}$')
    too_long = await client.call_tool("summarise_book", {"id": books[0].pk, "summary": "x" * 41})
    assert_tool_error(too_long, "^400 Bad Request: summary: Ensure this field has no more than 40 characters.$")
    created = await client.call_tool("post_new_book", {"title": "Solaris", "author": "Stanisław Lem", "year": 1961})
    assert assert_tool_result(created)["structuredContent"]["title"] == "Solaris"


def test_a_view_that_is_not_a_drf_view_is_e118() -> None:
    class NotAView(APIToolset):
        view = Book

    class NoSuchAction(APIToolset):
        view = ThrottledBooks
        actions = ["list", "destroy"]

    found = [(m.id, m.msg, m.hint) for m in toolset_messages(NotAView()) + toolset_messages(NoSuchAction())]
    gc.collect()
    assert found == [
        ("mcp_django.E118", "NotAView.view is not a DRF APIView or ViewSet.", "Set view to a view class."),
        (
            "mcp_django.E118",
            "NoSuchAction: ThrottledBooks has no action 'destroy'.",
            "Choose among list, retrieve.",
        ),
    ]


def test_a_bad_tool_name_is_e119() -> None:
    class Spaced(APIToolset):
        view = ThrottledBooks
        basename = "livre à lire"
        actions = ["retrieve"]

    found = [(m.id, m.msg, m.hint) for m in toolset_messages(Spaced())]
    gc.collect()
    assert found == [
        (
            "mcp_django.E119",
            "Spaced: tool name 'get_livre à lire' is not a valid MCP name.",
            "Set basename (and plural) to letters, digits and _.",
        )
    ]
