"""`gateway.listing` in memory: what a remote lists is cleaned, deduplicated and bounded for every kind of list."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import pytest

from mcp_django.client.limits import remember
from mcp_django.exceptions import BackendUnavailable
from mcp_django.gateway.listing import Listing, clean_text


def test_clean_text_removes_escape_sequences_and_unseen_characters_but_keeps_the_lines() -> None:
    text = "\x1b]8;;https://evil.example\x07link\x1b]8;;\x07\n\tdone\u200b\ufeff\x1bc \u2066iso\u2069"

    assert clean_text(text) == "link\n\tdone iso"
    assert clean_text("a\nb\u2028c", single_line=True) == "a b c"
    assert clean_text("abcdef", limit=4) == "abc…"


@pytest.mark.parametrize(
    ("method", "items", "kept"),
    [
        (
            "prompts/list",
            [{"name": "greet"}, {"name": "greet"}, {"name": "bad name"}, {"name": 3}, "text"],
            ["greet"],
        ),
        (
            "resources/list",
            [{"uri": "file:///a", "name": "A\nfile\x1b[1m"}, {"uri": "file:///a"}, {"uri": "file:///b\x00"}],
            ["file:///a"],
        ),
        (
            "resources/templates/list",
            [{"uriTemplate": "file:///{path}"}, {"uriTemplate": "x" * 5000}, {"name": "no template"}],
            ["file:///{path}"],
        ),
    ],
)
def test_each_list_keeps_the_first_usable_item_of_each_key(method: str, items: list[Any], kept: list[str]) -> None:
    listing = Listing("remote", method)

    listing.add(items)

    assert [item[listing.key] for item in listing.done()] == kept


def test_a_tool_that_runs_only_as_a_2025_task_is_not_listed() -> None:
    listing = Listing("remote", "tools/list")

    listing.add(
        [
            {"name": "only_as_task", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "required"}},
            {"name": "either_way", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "optional"}},
            {"name": "plain", "inputSchema": {"type": "object"}},
        ]
    )

    assert [tool["name"] for tool in listing.done()] == ["either_way", "plain"]


def test_a_resources_name_is_display_text_on_one_line() -> None:
    listing = Listing("remote", "resources/list")

    listing.add([{"uri": "file:///a", "name": "A\nfile\x1b[1m\u202e"}])

    assert listing.done() == [{"uri": "file:///a", "name": "A file"}]


def test_schema_and_argument_descriptions_are_cleaned_too() -> None:
    listing = Listing("remote", "prompts/list")

    listing.add([{"name": "p", "arguments": [{"name": "who", "description": "the \x1b[5mperson\x1b[0m\x00"}]}])

    assert listing.done()[0]["arguments"] == [{"name": "who", "description": "the person"}]


def test_a_listing_past_its_item_bound_fails_with_reason_limit(settings: Any) -> None:
    settings.MCP_DJANGO = {**settings.MCP_DJANGO, "REMOTE_MAX_LIST_ITEMS": 3}
    listing = Listing("remote", "tools/list")
    listing.add([{"name": f"t{n}"} for n in range(3)])

    with pytest.raises(BackendUnavailable) as refused:
        listing.add([{"name": "t3"}])

    assert refused.value.data == {"backend": "remote", "reason": "limit"}
    assert refused.value.message == (
        "Backend 'remote' unavailable: tools/list has more than 3 items (REMOTE_MAX_LIST_ITEMS)"
    )


def test_remember_forgets_the_oldest_past_the_bound_and_forgets_on_none(settings: Any) -> None:
    settings.MCP_DJANGO = {**settings.MCP_DJANGO, "REMOTE_MAX_LIST_ITEMS": 2}
    memo: OrderedDict[str, int] = OrderedDict()

    remember(memo, "a", 1)
    remember(memo, "b", 2)
    remember(memo, "a", 3)  # used again: now the newest
    remember(memo, "c", 4)
    remember(memo, "missing", None)

    assert list(memo.items()) == [("a", 3), ("c", 4)]
    remember(memo, "a", None)
    assert list(memo) == ["c"]
