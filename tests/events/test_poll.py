"""Events by poll (SEP-3415) over Streamable HTTP in 2026-07-28: the demo's book.added, cursors, gaps, access."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import transaction
from django.test import Client, override_settings

from mcp_django.events import emit
from mcp_django.events.store import purge
from tests.events.support import add_book, call
from tests.http_support import initialize, post

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def client() -> Client:
    return Client()


def _poll(client: Client, cursor: str | None, **params: Any) -> dict[str, Any]:
    answer = call(client, "events/poll", {"name": "book.added", "arguments": {}, "cursor": cursor, **params})
    assert "result" in answer, answer
    result: dict[str, Any] = answer["result"]
    return result


def test_events_list_describes_book_added_with_its_argument_and_payload_schemas(client: Client) -> None:
    listed = call(client, "events/list")["result"]["events"]

    book_added = next(described for described in listed if described["name"] == "book.added")
    assert book_added["description"] == "A book was added to the catalogue."
    assert book_added["delivery"] == ["poll", "push", "webhook"]
    assert book_added["inputSchema"]["properties"]["author"]["description"] == "only books by this author."
    assert set(book_added["payloadSchema"]["properties"]) == {"id", "title", "author", "year"}


def test_the_capability_is_advertised_and_the_methods_exist_only_in_2026_07_28(client: Client) -> None:
    discovered = call(client, "server/discover")["result"]
    initialized = post(client, initialize(), path="/books/mcp").json()["result"]
    handshake = post(client, {"jsonrpc": "2.0", "id": 2, "method": "events/list"}, path="/books/mcp")

    assert discovered["capabilities"]["extensions"]["io.modelcontextprotocol/events"] == {}
    assert "io.modelcontextprotocol/events" not in initialized["capabilities"].get("extensions", {})
    assert "io.modelcontextprotocol/events" not in initialized["capabilities"].get("experimental", {})
    assert handshake.json()["error"]["code"] in (-32601, -32600)


def test_a_poll_from_now_returns_a_cursor_and_the_next_poll_the_book_added_since(client: Client) -> None:
    first = _poll(client, None)
    book = add_book()
    second = _poll(client, first["cursor"])
    third = _poll(client, second["cursor"])

    assert first["events"] == []
    assert [occurrence["data"] for occurrence in second["events"]] == [
        {"id": book.pk, "title": "Dune", "author": "Frank Herbert", "year": 1965}
    ]
    occurrence = second["events"][0]
    assert occurrence["name"] == "book.added"
    assert occurrence["eventId"].startswith("evt_")
    assert occurrence["timestamp"].endswith("Z")
    assert occurrence["cursor"] == second["cursor"]
    assert second["truncated"] is False
    assert third["events"] == []
    assert third["cursor"] == second["cursor"]


def test_a_poll_resumes_from_any_cursor_it_was_given_and_filters_by_its_arguments(client: Client) -> None:
    start = _poll(client, None)["cursor"]
    add_book("Dune", "Frank Herbert")
    add_book("Emma", "Jane Austen")
    add_book("Persuasion", "Jane Austen")

    austen = _poll(client, start, arguments={"author": "Jane Austen"})
    everything = _poll(client, start)
    again = _poll(client, start)

    assert [occurrence["data"]["title"] for occurrence in austen["events"]] == ["Emma", "Persuasion"]
    assert [occurrence["data"]["title"] for occurrence in everything["events"]] == ["Dune", "Emma", "Persuasion"]
    assert again == everything  # the server keeps no state: a cursor can be polled from again


def test_max_events_pages_the_backlog_with_has_more(client: Client) -> None:
    start = _poll(client, None)["cursor"]
    for number in range(3):
        add_book(f"Book {number}")

    page = _poll(client, start, maxEvents=2)
    rest = _poll(client, page["cursor"], maxEvents=2)

    assert [occurrence["data"]["title"] for occurrence in page["events"]] == ["Book 0", "Book 1"]
    assert (page["hasMore"], page["nextPollMs"]) == (True, 0)
    assert [occurrence["data"]["title"] for occurrence in rest["events"]] == ["Book 2"]
    assert rest["hasMore"] is False
    assert rest["nextPollMs"] == 5000


def test_a_cursor_from_before_purged_occurrences_reads_truncated(client: Client) -> None:
    start = _poll(client, None)["cursor"]
    for number in range(3):
        add_book(f"Book {number}")
    with override_settings(MCP_DJANGO={"EVENTS_MAX_PER_TYPE": 1}):
        purge("book.added")

    after_gap = _poll(client, start)

    assert after_gap["truncated"] is True
    assert [occurrence["data"]["title"] for occurrence in after_gap["events"]] == ["Book 2"]
    assert _poll(client, after_gap["cursor"])["truncated"] is False


def test_an_occurrence_emitted_in_a_transaction_that_rolls_back_is_never_seen(client: Client) -> None:
    start = _poll(client, None)["cursor"]

    def rolled_back() -> None:
        with transaction.atomic():
            add_book("Never")
            raise RuntimeError

    with pytest.raises(RuntimeError):
        rolled_back()
    add_book("Kept")

    assert [occurrence["data"]["title"] for occurrence in _poll(client, start)["events"]] == ["Kept"]


def test_an_unknown_type_cursor_or_argument_is_an_error(client: Client) -> None:
    unknown = call(client, "events/poll", {"name": "book.burned", "cursor": None})
    bad_cursor = call(client, "events/poll", {"name": "book.added", "cursor": "yesterday"})
    bad_argument = call(client, "events/poll", {"name": "book.added", "arguments": {"author": 3}, "cursor": None})

    assert unknown["error"]["code"] == -32011
    assert unknown["error"]["data"] == {"name": "book.burned"}
    assert bad_cursor["error"]["code"] == -32602
    assert bad_argument["error"]["code"] == -32602


@pytest.mark.usefixtures("curated")
def test_a_type_the_caller_lacks_the_permission_for_is_absent_and_unknown(client: Client) -> None:
    listed = [described["name"] for described in call(client, "events/list")["result"]["events"]]
    polled = call(client, "events/poll", {"name": "book.curated", "cursor": None})

    assert "book.curated" not in listed
    assert polled["error"] == {"code": -32011, "message": "Event type not found", "data": {"name": "book.curated"}}


@pytest.mark.usefixtures("curated")
def test_emit_validates_the_payload_against_the_declared_type() -> None:
    with pytest.raises(LookupError):
        emit("book.unknown", {})
    with pytest.raises(ValueError, match="title"):
        emit("book.added", {"id": 1, "author": "x", "year": 1})
