"""`AdminActionsToolset`: the demo book admin's actions as tools (`example_project/demo/toolsets.py`).

The admin's own rules decide: the admin site lets in staff users, `get_actions(request)` keeps only the
actions whose `allowed_permissions` the caller holds, the changelist's search and filters select the
objects, a destructive action is confirmed through elicitation, and every run is in `LogEntry`.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib import admin
from django.contrib.admin.models import CHANGE, DELETION, LogEntry
from django.contrib.auth.models import Permission

from example_project.demo.models import Book
from mcp_django.testing import MCPTestClient, assert_tool_error, assert_tool_result
from mcp_django.toolsets import AdminActionsToolset
from mcp_django.toolsets.checks import toolset_messages

ADAPTER = "mcp/adapter"


def answering(confirm: bool, asked: list[dict[str, Any]]) -> Callable[[str, dict[str, Any]], dict[str, Any]]:
    def answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params)
        return {"action": "accept", "content": {"confirm": confirm}}

    return answer


@pytest.fixture
def summarised(books: list[Book]) -> list[Book]:
    Book.objects.update(summary="A summary.")
    return books


async def staff(user: Any) -> Any:
    user.is_staff = True
    await user.asave(update_fields=["is_staff"])
    return user


async def test_an_action_is_refused_without_its_allowed_permissions_and_nothing_changes(
    mcp_client: Callable[..., MCPTestClient], summarised: list[Book], reader: Any
) -> None:
    not_staff = await mcp_client(ADAPTER, user=reader).call_tool("book_clear_summaries", {"search": "dune"})
    assert_tool_error(not_staff, "^Permission denied: the admin site lets in active staff users only.$")

    client = mcp_client(ADAPTER, user=await staff(reader), on_input=answering(True, []))
    refused = await client.call_tool("book_clear_summaries", {"search": "dune"})
    assert_tool_error(
        refused,
        "^Permission denied: the admin does not offer you the action 'clear_summaries' "
        r"\(it needs demo.change_book\).$",
    )
    assert not await Book.objects.filter(summary="").aexists()
    assert not await LogEntry.objects.aexists()


async def test_a_permission_revoked_in_the_admin_refuses_the_next_call(
    mcp_client: Callable[..., MCPTestClient], summarised: list[Book], editor: Any
) -> None:
    client = mcp_client(ADAPTER, user=await staff(editor), on_input=answering(True, []))
    assert_tool_result(await client.call_tool("book_clear_summaries", {"ids": [summarised[0].pk]}))

    change = await Permission.objects.aget(content_type__app_label="demo", codename="change_book")
    await editor.user_permissions.aremove(change)
    refused = await client.call_tool("book_clear_summaries", {"ids": [summarised[1].pk]})
    assert_tool_error(refused, r"\(it needs demo.change_book\).$")
    assert (await Book.objects.aget(pk=summarised[1].pk)).summary == "A summary."


@pytest.mark.parametrize("era", ["handshake", "stateless"])
async def test_a_destructive_action_lists_the_objects_runs_once_confirmed_and_lands_in_the_log(
    mcp_client: Callable[..., MCPTestClient], summarised: list[Book], editor: Any, era: str
) -> None:
    asked: list[dict[str, Any]] = []
    client = mcp_client(ADAPTER, user=await staff(editor), era=era, on_input=answering(True, asked))

    result = assert_tool_result(await client.call_tool("book_clear_summaries", {"search": "le guin"}))
    assert result["structuredContent"] == {
        "action": "clear_summaries",
        "ran": True,
        "objects": [
            "The Dispossessed (Ursula K. Le Guin, 1974)",
            "The Left Hand of Darkness (Ursula K. Le Guin, 1969)",
        ],
        "messages": ["Cleared 2 summaries."],
    }
    assert asked[0]["message"] == (
        "Clear the summaries: 2 objects.\n"
        "- The Dispossessed (Ursula K. Le Guin, 1974)\n"
        "- The Left Hand of Darkness (Ursula K. Le Guin, 1969)\n"
        "Run it?"
    )
    cleared = [book.title async for book in Book.objects.filter(summary="").order_by("title")]
    assert cleared == ["The Dispossessed", "The Left Hand of Darkness"]
    logged = [
        (entry.object_repr, entry.action_flag, entry.user_id, entry.get_change_message())
        async for entry in LogEntry.objects.order_by("object_repr")
    ]
    assert logged == [
        (
            "The Dispossessed (Ursula K. Le Guin, 1974)",
            CHANGE,
            editor.pk,
            'Ran the admin action "Clear the summaries" through MCP.',
        ),
        (
            "The Left Hand of Darkness (Ursula K. Le Guin, 1969)",
            CHANGE,
            editor.pk,
            'Ran the admin action "Clear the summaries" through MCP.',
        ),
    ]


async def test_a_selection_that_changes_before_the_answer_comes_back_is_asked_about_again(
    mcp_client: Callable[..., MCPTestClient], summarised: list[Book], editor: Any
) -> None:
    asked: list[str] = []

    async def answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params["message"])
        if len(asked) == 1:  # someone adds a matching book while the user reads the question
            await Book.objects.acreate(title="Always Coming Home", author="Ursula K. Le Guin", year=1985, summary="x")
        return {"action": "accept", "content": {"confirm": True}}

    client = mcp_client(ADAPTER, user=await staff(editor), era="stateless", on_input=answer)
    result = assert_tool_result(await client.call_tool("book_clear_summaries", {"search": "le guin"}))

    assert [message.split("\n")[0] for message in asked] == [
        "Clear the summaries: 2 objects.",
        "Clear the summaries: 3 objects.",
    ]
    assert result["structuredContent"]["messages"] == ["Cleared 3 summaries."]


async def test_a_declined_confirmation_changes_nothing(
    mcp_client: Callable[..., MCPTestClient], summarised: list[Book], editor: Any
) -> None:
    client = mcp_client(ADAPTER, user=await staff(editor), on_input=answering(False, []))

    result = assert_tool_result(await client.call_tool("book_delete_selected", {"ids": [summarised[0].pk]}))
    assert result["structuredContent"]["ran"] is False
    assert result["structuredContent"]["objects"] == ["Dune (Frank Herbert, 1965)"]
    assert await Book.objects.acount() == 6
    assert not await LogEntry.objects.aexists()


async def test_django_s_delete_selected_deletes_once_confirmed_and_logs_the_deletions(
    mcp_client: Callable[..., MCPTestClient], books: list[Book], editor: Any
) -> None:
    client = mcp_client(ADAPTER, user=await staff(editor), on_input=answering(True, []))

    result = assert_tool_result(await client.call_tool("book_delete_selected", {"year": 1965}))
    assert result["structuredContent"]["messages"] == ["Successfully deleted 1 book."]
    assert not await Book.objects.filter(title="Dune").aexists()
    logged = [(entry.object_repr, entry.action_flag) async for entry in LogEntry.objects.all()]
    assert logged == [("Dune (Frank Herbert, 1965)", DELETION)]


@admin.action(description="Tidy the shelf", permissions=["change"])
def tidy_the_shelf(modeladmin: Any, request: Any, queryset: Any) -> None:
    """Upper-case the titles, and drop the books before 1960 (a renaming and a deletion in one action)."""
    for book in queryset:
        if book.year < 1960:
            book.delete()
        else:
            book.title = book.title.upper()
            book.save(update_fields=["title"])


class TidyingAdmin(admin.ModelAdmin[Book]):
    search_fields = ["title", "author"]
    actions = [tidy_the_shelf]


async def test_the_result_and_the_history_name_the_objects_as_the_action_left_them(
    mcp_client: Callable[..., MCPTestClient], books: list[Book], editor: Any
) -> None:
    site = admin.AdminSite(name="tests_tidying")
    site.register(Book, TidyingAdmin)

    class Tidying(AdminActionsToolset):
        id = "tests.toolsets.tidying"
        model = Book
        admin_site = site

    from mcp_django.endpoints import Endpoint

    endpoint = Endpoint("tests/tidying/mcp", name="tests-tidying", mode="adapter", providers=[Tidying])
    client = mcp_client(endpoint, user=await staff(editor))
    result = assert_tool_result(
        await client.call_tool("book_tidy_the_shelf", {"ids": [books[0].pk, books[1].pk, books[4].pk]})
    )

    renamed = "THE LEFT HAND OF DARKNESS (Ursula K. Le Guin, 1969)"
    deleted = "Foundation (Isaac Asimov, 1951)"  # gone: named as it was before the action
    assert result["structuredContent"]["objects"] == ["DUNE (Frank Herbert, 1965)", deleted, renamed]
    logged = [(entry.object_repr, entry.action_flag) async for entry in LogEntry.objects.order_by("object_repr")]
    assert logged == [("DUNE (Frank Herbert, 1965)", CHANGE), (deleted, DELETION), (renamed, CHANGE)]


async def test_bad_selections_are_clear_errors_that_change_nothing(
    mcp_client: Callable[..., MCPTestClient], summarised: list[Book], editor: Any
) -> None:
    client = mcp_client(ADAPTER, user=await staff(editor), on_input=answering(True, []))

    cases: dict[str, dict[str, Any]] = {
        "^Select the objects: give ids, search or a filter.$": {},
        "^No book with primary key 999999 in the selection.$": {"ids": [summarised[0].pk, 999_999]},
        "^No books match the selection.$": {"search": "no such book"},
        r"^Invalid arguments for tool book_clear_summaries: author: Extra inputs are not permitted$": {"author": "x"},
    }
    for expected, arguments in cases.items():
        assert_tool_error(await client.call_tool("book_clear_summaries", arguments), expected)
    assert not await Book.objects.filter(summary="").aexists()
    assert not await LogEntry.objects.aexists()


async def test_a_selection_over_max_objects_is_refused(
    mcp_client: Callable[..., MCPTestClient], summarised: list[Book], editor: Any
) -> None:
    class FewAtATime(AdminActionsToolset):
        id = "tests.toolsets.few_at_a_time"
        model = Book
        max_objects = 2

    from mcp_django.endpoints import Endpoint

    endpoint = Endpoint("tests/admin/mcp", name="tests-admin", mode="adapter", providers=[FewAtATime])
    client = mcp_client(endpoint, user=await staff(editor), on_input=answering(True, []))
    refused = await client.call_tool("book_clear_summaries", {"search": "e"})
    assert_tool_error(refused, "^The selection has [3-6] books, more than 2: narrow it.$")
    assert not await Book.objects.filter(summary="").aexists()


async def test_the_changelist_tool_reads_the_admin_s_columns_with_its_search_and_filters(
    mcp_client: Callable[..., MCPTestClient], books: list[Book], reader: Any
) -> None:
    refused = await mcp_client(ADAPTER, user=reader).call_tool("book_changelist", {})
    assert_tool_error(refused, "^Permission denied: the admin site lets in active staff users only.$")

    client = mcp_client(ADAPTER, user=await staff(reader))
    found = assert_tool_result(await client.call_tool("book_changelist", {"search": "le guin", "year": 1974}))
    assert found["structuredContent"] == {
        "count": 1,
        "rows": [{"pk": books[3].pk, "title": "The Dispossessed", "author": "Ursula K. Le Guin", "year": 1974}],
    }
    first = assert_tool_result(await client.call_tool("book_changelist", {"limit": 2}))["structuredContent"]
    assert (first["count"], [row["title"] for row in first["rows"]]) == (6, ["Dune", "Foundation"])
    assert_tool_error(
        await client.call_tool("book_changelist", {"limit": 21}),
        "^Invalid arguments for tool book_changelist: limit: Input should be less than or equal to 20$",
    )


def test_an_unregistered_model_is_e224_and_an_unknown_action_is_e225() -> None:
    class NotRegistered(AdminActionsToolset):
        model = Permission

    class UnknownAction(AdminActionsToolset):
        model = Book
        include = ["archive"]

    found = [(m.id, m.msg, m.hint) for m in toolset_messages(NotRegistered()) + toolset_messages(UnknownAction())]
    gc.collect()
    assert found == [
        (
            "mcp_django.E224",
            "NotRegistered.model is not a model registered with the admin site.",
            "Register its ModelAdmin first (django.contrib.admin before mcp_django).",
        ),
        (
            "mcp_django.E225",
            "UnknownAction.include: BookAdmin has no action 'archive'.",
            "Choose among delete_selected, clear_summaries.",
        ),
    ]


def test_max_objects_below_one_is_e226_and_a_bad_tool_name_is_e227() -> None:
    class NoObjects(AdminActionsToolset):
        model = Book
        max_objects = 0

    class Spaced(AdminActionsToolset):
        model = Book
        include = ["clear_summaries"]
        basename = "livre à lire"

    found = [(m.id, m.msg, m.hint) for m in toolset_messages(NoObjects()) + toolset_messages(Spaced())]
    gc.collect()
    assert found == [
        ("mcp_django.E226", "NoObjects.max_objects must be at least 1.", "Set max_objects to 1 or more."),
        (
            "mcp_django.E227",
            "Spaced: tool name 'livre à lire_clear_summaries' is not a valid MCP name.",
            "Set basename or names to letters, digits and _.",
        ),
    ]
