"""`NinjaToolset`: a django-ninja API's operations as tools, run through Ninja with the MCP caller as the user.

The demo's `BookNinjaTools` on the adapter endpoint (`example_project/demo/ninja_api.py`), and a router
of the tests' own on an endpoint of their own.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.http import HttpRequest
from ninja import Form, Router, Schema
from ninja.errors import HttpError

from example_project.demo.models import Book
from mcp_django.endpoints import Endpoint
from mcp_django.testing import MCPTestClient, assert_tool_error, assert_tool_result
from mcp_django.toolsets import NinjaToolset
from mcp_django.toolsets.checks import toolset_messages

ADAPTER = "mcp/adapter"

router = Router()


class Rating(Schema):
    stars: int
    note: str = ""


@router.post("/books/{book_id}/ratings", operation_id="rate_book")
def rate(request: HttpRequest, book_id: int, rating: Rating, anonymous: bool = False) -> dict[str, Any]:
    """Rate a book."""
    if not 1 <= rating.stars <= 5:
        raise HttpError(400, "Stars go from 1 to 5.")
    by = "someone" if anonymous else request.user.get_username()
    return {"book": book_id, "stars": rating.stars, "by": by}


@router.get("/whoami")
async def whoami(request: HttpRequest) -> str:
    """Who is asking (an async operation)."""
    return request.user.get_username()


@router.delete("/books/{book_id}")
def forget_book(request: HttpRequest, book_id: int) -> None:
    """Not served: excluded."""


forms = Router()


@forms.post("/notes", operation_id="add_note")
def add_note(request: HttpRequest, text: Form[str]) -> str:
    """Not servable: a form body."""
    return text


class RouterTools(NinjaToolset):
    id = "tests.toolsets.ninja_router"
    api = router
    exclude = ["forget_book"]
    names = {"rate_book": "rate"}


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    yield Endpoint("tests/ninja/mcp", name="tests-ninja", mode="adapter", providers=[RouterTools])
    gc.collect()


async def test_an_operation_s_input_schema_is_ninja_s_json_schema_of_its_parameters_and_body(
    mcp_client: Callable[..., MCPTestClient], editor: Any
) -> None:
    tools = {tool["name"]: tool for tool in await mcp_client(ADAPTER, user=editor).list_tools()}

    suggest = tools["suggest_book"]["inputSchema"]
    assert sorted(suggest["properties"]) == ["author", "title", "year"]
    assert suggest["properties"]["year"] == {
        "description": "The year it came out; not in the future.",
        "minimum": 1,
        "type": "integer",
    }
    assert sorted(suggest["required"]) == ["author", "title", "year"]
    assert suggest["additionalProperties"] is False
    assert sorted(tools["find_books"]["inputSchema"]["properties"]) == ["author", "before"]
    assert tools["read_book"]["outputSchema"]["properties"]["title"] == {"type": "string"}
    assert tools["read_book"]["annotations"]["readOnlyHint"] is True
    assert tools["read_book"]["description"] == "Read one book by its id."


async def test_a_successful_call_returns_the_operation_s_json(
    mcp_client: Callable[..., MCPTestClient], books: list[Book], reader: Any
) -> None:
    client = mcp_client(ADAPTER, user=reader)

    found = assert_tool_result(await client.call_tool("read_book", {"book_id": books[0].pk}))
    assert found["structuredContent"] == {"id": books[0].pk, "title": "Dune", "author": "Frank Herbert", "year": 1965}
    listed = assert_tool_result(await client.call_tool("find_books", {"author": "le guin", "before": 1970}))
    assert listed["content"][0]["text"] == (
        f'[{{"id": {books[1].pk}, "title": "The Left Hand of Darkness", "author": "Ursula K. Le Guin", "year": 1969}}]'
    )


async def test_ninja_s_own_auth_refuses_a_caller_it_does_not_accept(
    mcp_client: Callable[..., MCPTestClient], books: list[Book], reader: Any
) -> None:
    refused = await mcp_client(ADAPTER, user=reader).call_tool("staff_report")
    assert_tool_error(refused, "^401 Unauthorized: Unauthorized$")

    reader.is_staff = True
    await reader.asave(update_fields=["is_staff"])
    report = await mcp_client(ADAPTER, user=reader).call_tool("staff_report")
    assert assert_tool_result(report)["structuredContent"] == {"books": 6, "authors": 5, "asked_by": "reader"}


async def test_ninja_s_validation_errors_and_http_errors_are_error_results_that_change_nothing(
    mcp_client: Callable[..., MCPTestClient], books: list[Book], editor: Any
) -> None:
    client = mcp_client(ADAPTER, user=editor)

    invalid = await client.call_tool("suggest_book", {"title": "", "author": "Stanisław Lem", "year": 0})
    assert_tool_error(
        invalid,
        "^422 Unprocessable (Entity|Content): title: String should have at least 1 character; "
        "year: Input should be greater than or equal to 1$",
    )
    future = await client.call_tool("suggest_book", {"title": "Later", "author": "Someone", "year": 3000})
    assert_tool_error(future, "^400 Bad Request: A catalogued book cannot come from the future.$")
    duplicate = await client.call_tool("suggest_book", {"title": "dune", "author": "Frank Herbert", "year": 1965})
    assert_tool_error(duplicate, "^409 Conflict: The catalogue already has 'dune'.$")
    missing = await client.call_tool("read_book", {"book_id": 999_999})
    assert_tool_error(missing, "^404 Not Found: Not Found$")
    wrong_type = await client.call_tool("read_book", {"book_id": "one"})
    assert_tool_error(
        wrong_type,
        "^422 Unprocessable (Entity|Content): book_id: Input should be a valid integer, unable to parse string as an",
    )
    assert await Book.objects.acount() == 6

    created = await client.call_tool("suggest_book", {"title": "Solaris", "author": "Stanisław Lem", "year": 1961})
    row = assert_tool_result(created)["structuredContent"]
    assert row == {"id": row["id"], "title": "Solaris", "author": "Stanisław Lem", "year": 1961}
    assert await Book.objects.filter(title="Solaris").aexists()


async def test_write_scope_hides_the_writing_operations_from_callers_below_it(
    mcp_client: Callable[..., MCPTestClient], reader: Any
) -> None:
    tools = {tool["name"] for tool in await mcp_client(ADAPTER, user=reader).list_tools()}
    assert {"find_books", "read_book", "staff_report"} <= tools
    assert "suggest_book" not in tools


async def test_the_operation_sees_the_mcp_caller_as_request_user(
    mcp_client: Callable[..., MCPTestClient], books: list[Book], reader: Any, stranger: Any
) -> None:
    refused = await mcp_client(ADAPTER, user=stranger, scope="TEAM").call_tool(
        "suggest_book", {"title": "Solaris", "author": "Stanisław Lem", "year": 1961}
    )
    assert_tool_error(refused, "^403 Forbidden: Adding books needs the demo.add_book permission.$")
    assert not await Book.objects.filter(title="Solaris").aexists()


async def test_a_router_s_operations_with_path_query_and_body_arguments_and_an_async_one(
    mcp_client: Callable[..., MCPTestClient], endpoint: Endpoint, books: list[Book], reader: Any
) -> None:
    client = mcp_client(endpoint, user=reader)
    tools = {tool["name"]: tool for tool in await client.list_tools()}
    assert sorted(tools) == ["rate", "whoami"]
    assert sorted(tools["rate"]["inputSchema"]["properties"]) == ["anonymous", "book_id", "note", "stars"]

    rated = await client.call_tool("rate", {"book_id": books[0].pk, "stars": 4})
    assert_tool_result(rated, text=f'^{{"book": {books[0].pk}, "stars": 4, "by": "reader"}}$')
    anonymous = await client.call_tool("rate", {"book_id": books[0].pk, "stars": 5, "anonymous": True})
    assert '"by": "someone"' in assert_tool_result(anonymous)["content"][0]["text"]
    assert_tool_error(
        await client.call_tool("rate", {"book_id": 1, "stars": 9}), "^400 Bad Request: Stars go from 1 to 5.$"
    )
    assert_tool_error(
        await client.call_tool("rate", {"book_id": 1, "stars": 1, "sort": "x"}),
        "^Invalid arguments for tool rate: sort: Extra inputs are not permitted$",
    )
    assert_tool_result(await client.call_tool("whoami"), text='^"reader"$')


def test_an_api_that_is_not_ninja_is_e220_and_an_unknown_operation_is_e221() -> None:
    class NotAnAPI(NinjaToolset):
        api = object()

    class UnknownOperation(NinjaToolset):
        api = router
        include = ["rate_book", "whoami", "no_such_operation"]

    found = [(m.id, m.msg, m.hint) for m in toolset_messages(NotAnAPI()) + toolset_messages(UnknownOperation())]
    gc.collect()
    assert found == [
        ("mcp_django.E220", "NotAnAPI.api is not a NinjaAPI or a Router.", "Set api to one of them."),
        (
            "mcp_django.E221",
            "UnknownOperation.include: the API has no operation 'no_such_operation'.",
            "Name an operation id or a tool name of the API.",
        ),
    ]


def test_a_bad_tool_name_is_e222() -> None:
    class Spaced(NinjaToolset):
        api = router
        include = ["tests_toolsets_test_ninja_toolset_whoami"]
        names = {"tests_toolsets_test_ninja_toolset_whoami": "who am i"}

    found = [(m.id, m.msg, m.hint) for m in toolset_messages(Spaced())]
    gc.collect()
    assert found == [
        (
            "mcp_django.E222",
            "Spaced: tool name 'who am i' is not a valid MCP name.",
            "Set names = {operation_id: name} to letters, digits and _.",
        )
    ]


def test_an_operation_with_a_form_body_is_e223_and_left_out() -> None:
    class FormTools(NinjaToolset):
        api = forms

    toolset = FormTools()
    found = [(m.id, m.msg, m.hint) for m in toolset_messages(toolset)]
    assert not toolset.tools
    del toolset
    gc.collect()
    assert found == [
        (
            "mcp_django.E223",
            "FormTools: operation 'add_note' takes a form or file body.",
            "Exclude it, or give it path, query and JSON body parameters only.",
        )
    ]
