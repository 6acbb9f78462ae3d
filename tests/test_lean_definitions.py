"""Lean tool definitions (`mcp_django.declarations.lean`): `tools/list` without what only repeats the schema,
served by default; `Endpoint(definitions="verbose")` serves the definitions as built."""

from __future__ import annotations

import json
from typing import Annotated, Any

import pydantic
import pytest

from mcp_django import Registry
from mcp_django.declarations import Tool, parse_docstring
from mcp_django.declarations.lean import lean_schema
from mcp_django.endpoints import Endpoint
from mcp_django.testing import MCPTestClient

registry = Registry("lean-tests")


class Address(pydantic.BaseModel):
    street: str
    city: str


class Node(pydantic.BaseModel):
    label: str
    children: list[Node] = []


@registry.tool
def ship(
    parcel_id: int,
    to: Address,
    back: Address | None = None,
    note: Annotated[str | None, pydantic.Field(title="Note for the courier")] = None,
) -> str:
    """Ship a parcel.

    Args:
        parcel_id: the parcel's number, as printed on its label.
        to: where it goes.
        back: where it comes back to if nobody is in.
    """
    return "shipped"


@registry.tool
def weigh(grams: int, unit: str = "g") -> dict[str, int]:
    """Weigh a parcel.

    Parameters
    ----------
    grams : int
        The weight, in grams
        (rounded).
    unit : str
        The unit to answer in.

    Returns
    -------
    dict
        The weight.
    """
    return {"weight": grams}


@registry.tool
def label(parcel_id: int, size: str = "A6") -> str:
    """Print a parcel's label.

    :param parcel_id: the parcel's number.
    :param str size: the paper size,
        A6 or A5.
    :returns: the label's text.
    """
    return "label"


@registry.tool
def tree(root: Node) -> Node:
    """Echo a tree of labels."""
    return root


def _listed(definitions: str = "lean") -> dict[str, dict[str, Any]]:
    endpoint = Endpoint("lean/mcp", name="lean", registry=registry, allow_anonymous=True, definitions=definitions)  # type: ignore[arg-type]  # the two values and a wrong one
    listed = MCPTestClient(endpoint).sync.list_tools()
    return {tool["name"]: tool for tool in listed}


def test_a_lean_definition_has_no_title_repeating_a_name_and_no_null_default_but_keeps_what_a_user_wrote() -> None:
    schema = _listed()["ship"]["inputSchema"]

    assert schema["properties"]["parcel_id"] == {
        "type": "integer",
        "description": "the parcel's number, as printed on its label.",
    }
    assert schema["properties"]["note"] == {
        "anyOf": [{"type": "string"}, {"type": "null"}],
        "title": "Note for the courier",
    }
    assert schema["$defs"] == {  # used twice (to, back): shared, without the title pydantic gives it
        "Address": {
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
            "required": ["street", "city"],
        }
    }
    assert schema["properties"]["back"] == {
        "anyOf": [{"$ref": "#/$defs/Address"}, {"type": "null"}],
        "description": "where it comes back to if nobody is in.",
    }


def test_a_verbose_endpoint_serves_the_definitions_as_pydantic_built_them() -> None:
    schema = _listed("verbose")["ship"]["inputSchema"]

    assert schema["properties"]["parcel_id"]["title"] == "Parcel Id"
    assert schema["properties"]["back"]["default"] is None
    assert schema["$defs"]["Address"]["title"] == "Address"


def test_numpy_and_sphinx_docstrings_give_each_argument_its_description() -> None:
    tools = _listed()

    assert tools["weigh"]["description"] == "Weigh a parcel."
    assert tools["weigh"]["inputSchema"]["properties"]["grams"]["description"] == "The weight, in grams (rounded)."
    assert tools["weigh"]["inputSchema"]["properties"]["unit"] == {
        "type": "string",
        "default": "g",
        "description": "The unit to answer in.",
    }
    assert tools["label"]["description"] == "Print a parcel's label."
    assert tools["label"]["inputSchema"]["properties"]["size"]["description"] == "the paper size, A6 or A5."
    assert tools["label"]["inputSchema"]["properties"]["parcel_id"]["description"] == "the parcel's number."


def test_a_model_used_once_is_written_in_place_and_a_recursive_one_stays_in_defs() -> None:
    tools = _listed()

    output = tools["weigh"]["outputSchema"]
    assert "$defs" not in output
    tree = tools["tree"]
    assert tree["inputSchema"]["properties"]["root"] == {"$ref": "#/$defs/Node"}
    assert tree["inputSchema"]["$defs"]["Node"]["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}
    assert "title" not in tree["inputSchema"]["$defs"]["Node"]


def test_an_explicit_description_s_args_section_moves_into_the_arguments_it_describes() -> None:
    def move(source: str, target: Annotated[str, pydantic.Field(description="Where to, as a path.")]) -> str:
        return target

    tool = Tool(
        move,
        description="Move a file.\n\nArgs:\n    source: the file to move.\n    target: ignored: it has its own.",
    )

    assert tool.wire["description"] == "Move a file."
    assert tool.wire["inputSchema"]["properties"]["source"]["description"] == "the file to move."
    assert tool.wire["inputSchema"]["properties"]["target"]["description"] == "Where to, as a path."
    assert tool.verbose_wire["description"].endswith("ignored: it has its own.")


def test_a_schema_given_verbatim_is_served_as_written() -> None:
    schema = {
        "type": "object",
        "properties": {"query": {"type": "string", "title": "Query", "default": None}},
        "$defs": {"Unused": {"title": "Unused", "type": "object"}},
    }

    described = "Find.\n\nArgs:\n    query: words."
    tool = Tool(lambda query=None: query, name="find", description=described, input_schema=schema)

    assert tool.wire["inputSchema"] == schema
    assert tool.wire["description"] == described


def test_data_keywords_are_left_as_they_are() -> None:
    schema = {
        "type": "object",
        "properties": {
            "shape": {
                "title": "Shape",
                "default": {"title": "Title", "properties": {"title": {"title": "Title"}}},
                "examples": [{"title": "Title"}],
                "const": None,
            }
        },
    }

    assert lean_schema(schema)["properties"]["shape"] == {
        "default": {"title": "Title", "properties": {"title": {"title": "Title"}}},
        "examples": [{"title": "Title"}],
        "const": None,
    }


def test_a_line_that_is_not_a_known_section_stays_in_the_description() -> None:
    description, arguments = parse_docstring("Find books.\n\nUsage:\n    find_books(query)\n\nArgs:\n    query: words.")

    assert description == "Find books.\n\nUsage:\n    find_books(query)"
    assert arguments == {"query": "words."}


def test_an_endpoint_refuses_an_unknown_definitions_value() -> None:
    with pytest.raises(ValueError, match="definitions must be 'lean' or 'verbose'"):
        _listed("short")


def test_toolsets_lean_definitions_are_a_fifth_shorter_and_name_the_same_arguments(admin_user: Any) -> None:
    def listed(definitions: str) -> list[dict[str, Any]]:
        endpoint = Endpoint(
            "toolset/mcp",
            name="toolset",
            mode="adapter",
            providers=["demo.book_toolset", "demo.book_api", "demo.book_ninja", "demo.book_admin_actions"],
            definitions=definitions,  # type: ignore[arg-type]  # the two values, as str
        )
        return MCPTestClient(endpoint, user=admin_user).sync.list_tools()

    lean, verbose = listed("lean"), listed("verbose")

    assert len(lean) > 15  # the model's, the DRF viewset's, the django-ninja router's and the admin actions' tools
    assert len(json.dumps(lean)) < 0.8 * len(json.dumps(verbose))
    assert [(tool["name"], sorted(tool["inputSchema"].get("properties", {}))) for tool in lean] == [
        (tool["name"], sorted(tool["inputSchema"].get("properties", {}))) for tool in verbose
    ]
    assert '"title"' in json.dumps(verbose)
