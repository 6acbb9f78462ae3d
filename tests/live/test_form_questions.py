"""A Django form asked through elicitation (`ctx.elicit_form_sync`), answered by the official client's
callback over real HTTP, in both eras: the demo's `rate_book` asks its `RatingForm` (a choice field, which
is required, and a `clean()` of its own), and a rejected answer is asked again with the form's message."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import types

from tests.conftest import LiveServer
from tests.live.test_official_client import client, text_of

pytestmark = pytest.mark.live

ERAS = ["legacy", "2026-07-28"]


class Answers:
    """The user at the client: answers the questions in turn and remembers what was asked."""

    def __init__(self, *answers: dict[str, Any]) -> None:
        self.answers = list(answers)
        self.asked: list[types.ElicitRequestParams] = []

    async def __call__(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.asked.append(params)
        return types.ElicitResult.model_validate(self.answers[len(self.asked) - 1])


async def dune_id(server: LiveServer, mode: str) -> int:
    async with client(server, mode) as session:
        found = text_of(await session.call_tool("search_books", {"query": "Dune"}))
    return int(found.split()[0].lstrip("#"))


@pytest.mark.parametrize("mode", ERAS)
async def test_a_form_question_offers_the_forms_choices_and_asks_again_with_its_error(
    example_server: LiveServer, mode: str
) -> None:
    book_id = await dune_id(example_server, mode)
    answers = Answers(
        {"action": "accept", "content": {"stars": "1"}},
        {"action": "accept", "content": {"stars": "6", "comment": "Too much sand"}},
        {"action": "accept", "content": {"stars": "1", "comment": "Too much sand"}},
    )
    async with client(example_server, mode, elicitation_callback=answers) as session:
        result = await session.call_tool("rate_book", {"book_id": book_id})
    assert not result.is_error, result
    assert text_of(result) == "You gave Dune 1 of 5 stars: Too much sand"

    first, _, third = (
        asked.requested_schema for asked in answers.asked if isinstance(asked, types.ElicitRequestFormParams)
    )
    assert first["required"] == ["stars"]
    assert first["properties"]["stars"]["title"] == "Your rating"
    assert first["properties"]["stars"]["oneOf"][0] == {"const": "5", "title": "★★★★★ Loved it"}
    assert answers.asked[0].message == "How did you like Dune?"
    assert answers.asked[1].message == (
        "How did you like Dune?\n\nPlease correct your answer:\n- Please say in a comment what you disliked."
    )
    assert answers.asked[2].message == (
        "How did you like Dune?\n\nPlease correct your answer:\n"
        "- Your rating: Select a valid choice. 6 is not one of the available choices."
    )
    assert third["properties"]["comment"]["default"] == "Too much sand"


@pytest.mark.parametrize("mode", ERAS)
async def test_a_declined_form_question_is_an_answer_the_tool_reports(example_server: LiveServer, mode: str) -> None:
    book_id = await dune_id(example_server, mode)
    answers = Answers({"action": "decline"})
    async with client(example_server, mode, elicitation_callback=answers) as session:
        result = await session.call_tool("rate_book", {"book_id": book_id})
    assert text_of(result) == "No rating for Dune (the user chose decline)."
