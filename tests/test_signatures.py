"""`declarations/signatures.py`: which declarations compile when declared and which on first use (issue 34)."""

from __future__ import annotations

import datetime
from typing import Annotated, Any, Literal

import pytest
from pydantic import Field

from mcp_django import DeclarationError
from mcp_django.declarations import Tool
from mcp_django.declarations.signatures import plain_annotation


class Opaque:
    """A class pydantic has no schema for."""


@pytest.mark.parametrize(
    "annotation",
    [str, int, float, bool, None, Any, list[int], dict[str, Any], tuple[int, ...], int | None, Literal["a", 1, None]],
)
def test_json_scalars_any_and_containers_of_them_are_plain(annotation: Any) -> None:
    assert plain_annotation(annotation)


@pytest.mark.parametrize(
    "annotation",
    [Opaque, datetime.date, bytes, set[int], list[Opaque], Literal[1.5], Annotated[int, Field(gt=0)]],
)
def test_other_types_and_annotated_metadata_are_not_plain(annotation: Any) -> None:
    assert not plain_annotation(annotation)


def test_a_tool_with_plain_annotations_compiles_its_definition_on_first_use() -> None:
    def search(query: str, limit: int = 10) -> list[str]:
        """Search the catalogue."""
        return [query] * limit

    tool = Tool(search)
    assert "_compiled" not in vars(tool.signature)
    assert "wire" not in vars(tool)

    assert tool.wire["inputSchema"]["required"] == ["query"]
    assert tool.wire["outputSchema"]["properties"]["result"]["type"] == "array"
    assert tool.signature.bind({"query": "x", "limit": "2"}) == {"query": "x", "limit": 2}


def test_a_tool_with_an_annotated_field_compiles_when_declared() -> None:
    def greet(name: Annotated[str, Field(max_length=3)]) -> str:
        """Greet someone."""
        return name

    tool = Tool(greet)
    assert "_compiled" in vars(tool.signature)
    assert "wire" in vars(tool)


def test_a_parameter_type_pydantic_refuses_is_still_a_declaration_error_when_declared() -> None:
    def handle(thing: Opaque) -> str:
        """Handle a thing."""
        return str(thing)

    with pytest.raises(DeclarationError, match="tool 'handle': cannot build an input schema"):
        Tool(handle)


def test_a_return_type_pydantic_refuses_is_still_a_declaration_error_when_structured_output_is_asked_for() -> None:
    def make() -> Opaque:
        """Make a thing."""
        return Opaque()

    with pytest.raises(DeclarationError, match="tool 'make': no output schema for"):
        Tool(make, structured_output=True)
