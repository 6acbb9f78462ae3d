"""Content helpers build wire dicts that mcp-types accepts unchanged."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_django import content
from tests.declarations_support import wire

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    "block",
    [
        content.text("hello"),
        content.text("for you", annotations={"audience": ["user"], "priority": 0.5}, meta={"k": "v"}),
        content.image(PNG, "image/png"),
        content.audio(b"RIFF", "audio/wav"),
        content.embedded_resource("test://embedded-resource", text="embedded", mime_type="text/plain"),
        content.embedded_resource("test://blob", blob=PNG, mime_type="image/png"),
        content.resource_link("test://doc", "doc", title="Doc", description="Read me", mime_type="text/plain", size=3),
    ],
    ids=["text", "text-annotated", "image", "audio", "embedded-text", "embedded-blob", "resource-link"],
)
def test_every_content_block_is_a_valid_tool_result_block(block: Any) -> None:
    assert wire("tools/call", {"content": [block]}) == {"content": [block]}


def test_binary_data_is_base64_encoded_and_strings_are_taken_as_base64_already() -> None:
    assert content.image(PNG, "image/png")["data"] == "iVBORw0KGgo="
    assert content.audio("UklGRg==", "audio/wav")["data"] == "UklGRg=="
    assert content.embedded_resource("test://b", blob=b"\x01")["resource"] == {"uri": "test://b", "blob": "AQ=="}


def test_resource_contents_need_exactly_one_of_text_or_blob() -> None:
    with pytest.raises(TypeError, match="exactly one of text= or blob="):
        content.resource_contents("test://x")
    with pytest.raises(TypeError, match="exactly one of text= or blob="):
        content.embedded_resource("test://x", text="a", blob=b"b")


def test_resource_contents_are_valid_read_results() -> None:
    contents = [
        content.resource_contents("test://a", text="a", mime_type="text/plain"),
        content.resource_contents("test://b", blob=PNG, mime_type="image/png"),
    ]

    assert wire("resources/read", {"contents": contents}) == {"contents": contents}


def test_prompt_messages_are_valid_prompt_results() -> None:
    messages = [
        content.user_message("question"),
        content.assistant_message(content.image(PNG, "image/png")),
        content.user_message(content.embedded_resource("test://r", text="body", mime_type="text/plain")),
    ]

    assert wire("prompts/get", {"messages": messages}) == {"messages": messages}
    assert messages[0] == {"role": "user", "content": {"type": "text", "text": "question"}}


def test_tool_result_builds_a_complete_call_tool_result() -> None:
    result = content.tool_result(
        ["first", content.text("second")], structured={"count": 2}, is_error=False, meta={"trace": "1"}
    )

    assert isinstance(result, content.ToolResult)
    assert wire("tools/call", result) == {
        "content": [{"type": "text", "text": "first"}, {"type": "text", "text": "second"}],
        "structuredContent": {"count": 2},
        "_meta": {"trace": "1"},
    }


def test_error_builds_an_is_error_result() -> None:
    assert content.error("boom") == {"content": [{"type": "text", "text": "boom"}], "isError": True}
