"""Tools declared as functions: schemas, validation, output, threads, context and errors."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import threading
import typing
from typing import Annotated, Any

import pytest
from django.core.exceptions import ValidationError
from pydantic import BaseModel, Field
from rest_framework import serializers

from mcp_django import Context, DeclarationError, Registry, ToolError, content
from mcp_django.declarations import Prompt, Tool, UriTemplate, parse_docstring
from mcp_django.protocol.context import SessionState
from mcp_django.protocol.jsonrpc import InvalidParams, MissingClientCapability
from tests.declarations_support import make_request, wire


async def call(tool: Tool, arguments: dict[str, Any] | None = None, **request_options: Any) -> dict[str, Any]:
    request, _ = make_request(**request_options)
    result = await tool.call(arguments or {}, request)
    return wire("tools/call", result)


def list_wire(*tools: Tool) -> list[dict[str, Any]]:
    return wire("tools/list", {"tools": [tool.wire for tool in tools]})["tools"]


# ---------------------------------------------------------------- input schemas


def test_input_schema_takes_parameter_descriptions_from_the_docstring() -> None:
    def search(query: str, limit: int = 10) -> str:
        """Search the catalogue.

        Args:
            query: words to look for,
                matched case-insensitively.
            limit (int): at most this many hits.
        """
        return query

    tool = Tool(search)

    assert tool.description == "Search the catalogue."
    assert tool.input_schema["properties"]["query"]["description"] == "words to look for, matched case-insensitively."
    assert tool.input_schema["properties"]["limit"]["description"] == "at most this many hits."


def test_annotated_field_description_wins_over_the_docstring() -> None:
    def greet(name: Annotated[str, Field(description="who to greet", max_length=20)]) -> str:
        """Greet someone.

        Args:
            name: the docstring's words.
        """
        return name

    schema = Tool(greet).input_schema

    assert schema["properties"]["name"]["description"] == "who to greet"
    assert schema["properties"]["name"]["maxLength"] == 20


def test_parameters_without_defaults_are_required_and_defaults_are_published() -> None:
    def book(room: str, nights: int = 1, note: str | None = None) -> str:
        """Book a room."""
        return room

    schema = Tool(book).input_schema

    assert schema["type"] == "object"
    assert schema["required"] == ["room"]
    assert schema["properties"]["nights"]["default"] == 1
    assert schema["properties"]["note"]["default"] is None
    assert "title" not in schema


def test_a_function_without_parameters_gets_a_closed_empty_object_schema() -> None:
    def ping() -> str:
        """Answer pong."""
        return "pong"

    assert Tool(ping).input_schema == {"type": "object", "additionalProperties": False}


def test_the_context_parameter_is_left_out_of_the_schema_whatever_its_name() -> None:
    def whoami(request_context: Context, shout: bool = False) -> str:
        """Say who is calling."""
        return str(request_context.user)

    tool = Tool(whoami)

    assert list(tool.input_schema["properties"]) == ["shout"]
    assert tool.signature.context_param == "request_context"


def test_parameters_named_like_pydantic_attributes_still_work() -> None:
    def describe(schema: str, model_name: str) -> str:
        """Describe a schema."""
        return f"{schema}/{model_name}"

    tool = Tool(describe)

    assert set(tool.input_schema["properties"]) == {"schema", "model_name"}
    assert asyncio.run(call(tool, {"schema": "s", "model_name": "m"}))["content"][0]["text"] == "s/m"


class Address(BaseModel):
    street: str
    city: str


def test_nested_models_are_published_with_definitions() -> None:
    def ship(to: Address) -> str:
        """Ship a parcel."""
        return to.city

    tool = Tool(ship)

    assert "Address" in tool.input_schema["$defs"]
    assert asyncio.run(call(tool, {"to": {"street": "Main St", "city": "Oslo"}}))["content"][0]["text"] == "Oslo"


def test_a_tool_needs_a_description() -> None:
    def mute(x: int) -> int:
        return x

    with pytest.raises(DeclarationError, match="tool 'mute' needs a description"):
        Tool(mute)
    assert Tool(mute, description="Return x.").description == "Return x."


def test_variadic_parameters_are_rejected_at_declaration() -> None:
    def spread(*values: int) -> int:
        """Sum values."""
        return sum(values)

    with pytest.raises(DeclarationError, match="must be passable by keyword"):
        Tool(spread)


def test_a_verbatim_input_schema_is_published_unchanged_and_arguments_passed_as_keywords() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {"address": {"type": "object", "properties": {"street": {"type": "string"}}}},
        "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
        "required": ["name"],
        "additionalProperties": False,
    }

    def register(**arguments: Any) -> str:
        """Register a person."""
        return ",".join(sorted(arguments))

    tool = Tool(register, input_schema=schema)

    assert list_wire(tool)[0]["inputSchema"] == schema
    assert asyncio.run(call(tool, {"name": "Ada", "address": {}}))["content"][0]["text"] == "address,name"
    missing = asyncio.run(call(tool, {"address": {}}))
    assert missing["isError"] is True
    assert "name: Field required" in missing["content"][0]["text"]
    extra = asyncio.run(call(tool, {"name": "Ada", "age": 3}))
    assert "age: Extra inputs are not permitted" in extra["content"][0]["text"]


# ---------------------------------------------------------------- argument validation


def test_invalid_arguments_are_an_is_error_result_naming_every_failing_field() -> None:
    ran = []

    def add(a: int, b: int) -> int:
        """Add two numbers."""
        ran.append(True)
        return a + b

    result = asyncio.run(call(Tool(add), {"a": "three"}))

    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert text.startswith("Invalid arguments for tool add: ")
    assert "a: Input should be a valid integer" in text
    assert "b: Field required" in text
    assert ran == []


def test_arguments_are_coerced_by_their_type_hints() -> None:
    def repeat(word: str, times: int, tags: list[str]) -> str:
        """Repeat a word."""
        return f"{word * times}:{'+'.join(tags)}"

    result = asyncio.run(call(Tool(repeat), {"word": "ab", "times": "2", "tags": '["x", "y"]'}))

    assert result["content"][0]["text"] == "abab:x+y"


# ---------------------------------------------------------------- output


class Weather(BaseModel):
    city: str
    celsius: float


def test_a_model_return_gives_an_object_output_schema_and_structured_content_with_json_text() -> None:
    async def weather(city: str) -> Weather:
        """Report the weather."""
        return Weather(city=city, celsius=21.5)

    tool = Tool(weather)
    result = asyncio.run(call(tool, {"city": "Oslo"}))

    assert tool.output_schema is not None
    assert tool.output_schema["type"] == "object"
    assert tool.output_schema["required"] == ["city", "celsius"]
    assert result["structuredContent"] == {"city": "Oslo", "celsius": 21.5}
    assert result["content"] == [{"type": "text", "text": '{"city":"Oslo","celsius":21.5}'}]


class Point(typing.TypedDict):
    x: int
    y: int


@dataclasses.dataclass
class Span:
    start: int
    end: int


@pytest.mark.parametrize(
    ("annotation", "value", "structured"),
    [
        (Point, {"x": 1, "y": 2}, {"x": 1, "y": 2}),
        (Span, Span(1, 3), {"start": 1, "end": 3}),
        (dict[str, int], {"a": 1}, {"a": 1}),
    ],
    ids=["typeddict", "dataclass", "dict"],
)
def test_object_return_types_are_structured_without_wrapping(annotation: Any, value: Any, structured: Any) -> None:
    def produce() -> Any:
        """Produce a value."""
        return value

    produce.__annotations__["return"] = annotation
    tool = Tool(produce)

    assert tool.output_schema is not None
    assert tool.output_schema["type"] == "object"
    assert "result" not in tool.output_schema.get("properties", {})
    assert asyncio.run(call(tool))["structuredContent"] == structured


@pytest.mark.parametrize(
    ("annotation", "value", "text", "schema_type"),
    [
        (int, 42, "42", "integer"),
        (str, "hello", "hello", "string"),
        (list[int], [1, 2], "[1,2]", "array"),
        (bool, True, "true", "boolean"),
    ],
    ids=["int", "str", "list", "bool"],
)
def test_primitive_return_types_are_wrapped_in_a_result_object(
    annotation: Any, value: Any, text: str, schema_type: str
) -> None:
    def produce() -> Any:
        """Produce a value."""
        return value

    produce.__annotations__["return"] = annotation
    tool = Tool(produce)
    result = asyncio.run(call(tool))

    assert tool.output_schema is not None
    assert tool.output_schema == {
        "type": "object",
        "properties": {"result": tool.output_schema["properties"]["result"]},
        "required": ["result"],
    }
    assert tool.output_schema["properties"]["result"]["type"] == schema_type
    assert result["structuredContent"] == {"result": value}
    assert result["content"] == [{"type": "text", "text": text}]


def test_a_return_value_that_breaks_its_annotation_is_an_is_error_result() -> None:
    def count() -> int:
        """Count things."""
        return "many"  # type: ignore[return-value]  # the mistake under test

    result = asyncio.run(call(Tool(count)))

    assert result["isError"] is True
    assert result["content"][0]["text"].startswith("Error executing tool count: ")


def test_structured_output_can_be_switched_off() -> None:
    def total() -> int:
        """Total."""
        return 3

    tool = Tool(total, structured_output=False)
    result = asyncio.run(call(tool))

    assert tool.output_schema is None
    assert result == {"content": [{"type": "text", "text": "3"}]}


def test_content_block_returns_are_unstructured_and_sent_as_is() -> None:
    def gallery() -> list[content.ContentBlock]:
        """Show pictures."""
        return [
            content.text("Multiple content types test:"),
            content.image(b"\x89PNG\r\n", "image/png"),
            content.embedded_resource("test://mixed", text='{"test":"data"}', mime_type="application/json"),
        ]

    tool = Tool(gallery)
    result = asyncio.run(call(tool))

    assert tool.output_schema is None
    assert [block["type"] for block in result["content"]] == ["text", "image", "resource"]
    assert "structuredContent" not in result


@pytest.mark.parametrize(
    ("value", "blocks"),
    [
        (None, []),
        ("plain", [{"type": "text", "text": "plain"}]),
        (content.audio(b"\0\0\0", "audio/wav"), [{"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}]),
        (["a", content.text("b")], [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]),
        ({"not": "a block"}, [{"type": "text", "text": '{"not":"a block"}'}]),
        (
            b"\x00\x01",
            [
                {
                    "type": "resource",
                    "resource": {
                        "uri": "mcp-django://tools/produce/result",
                        "mimeType": "application/octet-stream",
                        "blob": "AAE=",
                    },
                }
            ],
        ),
    ],
    ids=["none", "str", "block", "list", "dict", "bytes"],
)
def test_unannotated_return_values_become_content_blocks(value: Any, blocks: list[dict[str, Any]]) -> None:
    def produce():  # no annotation on purpose
        """Produce a value."""
        return value

    assert asyncio.run(call(Tool(produce))) == {"content": blocks}


def test_an_explicit_tool_result_is_sent_as_built() -> None:
    def fail() -> content.ToolResult:
        """Fail on purpose."""
        return content.error("This tool intentionally returns an error for testing")

    result = asyncio.run(call(Tool(fail)))

    assert result == {
        "content": [{"type": "text", "text": "This tool intentionally returns an error for testing"}],
        "isError": True,
    }


def test_a_call_tool_result_shaped_dict_from_an_unstructured_tool_is_sent_as_is() -> None:
    def fail():  # no annotation on purpose
        """Fail on purpose."""
        return {"content": [{"type": "text", "text": "nope"}], "isError": True}

    assert asyncio.run(call(Tool(fail))) == {"content": [{"type": "text", "text": "nope"}], "isError": True}


# ---------------------------------------------------------------- errors


def test_a_tool_error_becomes_an_is_error_result_with_its_message_verbatim() -> None:
    def refuse() -> str:
        """Refuse."""
        raise ToolError("The warehouse is closed today")

    result = asyncio.run(call(Tool(refuse)))

    assert result == {"content": [{"type": "text", "text": "The warehouse is closed today"}], "isError": True}


def test_an_exception_becomes_an_is_error_result_without_traceback_and_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def explode() -> str:
        """Explode."""
        raise RuntimeError("disk full")

    with caplog.at_level(logging.ERROR, logger="mcp_django.tools"):
        result = asyncio.run(call(Tool(explode)))

    assert result == {"content": [{"type": "text", "text": "Error executing tool explode: disk full"}], "isError": True}
    assert "Traceback" not in result["content"][0]["text"]
    assert caplog.records[0].name == "mcp_django.tools"
    assert caplog.records[0].exc_info is not None


def test_a_django_validation_error_is_an_is_error_result_with_its_messages_and_no_error_log(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def register(title: str) -> str:
        """Register a title."""
        raise ValidationError(
            {"title": ['A title <a href="/help/titles/">must be unique</a>.'], "__all__": ["Not today."]}
        )

    def check_one(year: int) -> str:
        """Check one year."""
        raise ValidationError("Enter a year after %(year)s.", params={"year": 1450})

    with caplog.at_level(logging.INFO, logger="mcp_django.tools"):
        result = asyncio.run(call(Tool(register), {"title": "Dune"}))
        single = asyncio.run(call(Tool(check_one), {"year": 1}))

    assert result == {
        "content": [{"type": "text", "text": "title: A title must be unique.; Not today."}],
        "isError": True,
    }
    assert single == {"content": [{"type": "text", "text": "Enter a year after 1450."}], "isError": True}
    assert caplog.records == []


def test_a_drf_validation_error_is_an_is_error_result_with_its_messages() -> None:
    def rate(stars: int) -> str:
        """Rate a book."""
        raise serializers.ValidationError({"stars": ["Ensure this value is less than or equal to 5."]})

    result = asyncio.run(call(Tool(rate), {"stars": 9}))

    assert result["content"][0]["text"] == "stars: Ensure this value is less than or equal to 5."


def test_a_tool_error_or_validation_error_from_a_prompt_is_invalid_params_with_its_message(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def child_summary(slug: str) -> str:
        """Summarise a child's day."""
        raise ToolError(f"No child with the slug {slug!r}.")

    def dated(day: str) -> str:
        """A day's notes."""
        raise ValidationError("Enter a valid date.")

    request, _ = make_request("prompts/get")
    with caplog.at_level(logging.INFO):
        with pytest.raises(InvalidParams, match=r"^No child with the slug 'ada'\.$") as raised:
            asyncio.run(Prompt(child_summary).get({"slug": "ada"}, request))
        with pytest.raises(InvalidParams, match=r"^Enter a valid date\.$"):
            asyncio.run(Prompt(dated).get({"day": "soon"}, request))

    assert raised.value.code == -32602
    assert caplog.records == []


def test_a_protocol_error_raised_by_a_tool_propagates() -> None:
    async def needs_sampling(ctx: Context) -> str:
        """Need sampling."""
        ctx.request.require_capability("sampling")
        return "ok"

    request, _ = make_request()
    with pytest.raises(MissingClientCapability):
        asyncio.run(Tool(needs_sampling).call({}, request))
    allowed, _ = make_request(client_capabilities={"sampling": {}})
    assert asyncio.run(Tool(needs_sampling).call({}, allowed))["content"][0]["text"] == "ok"


# ---------------------------------------------------------------- threads and context


def test_an_async_tool_runs_on_the_event_loop_thread() -> None:
    seen: dict[str, int] = {}

    async def where() -> str:
        """Say where."""
        seen["tool"] = threading.get_ident()
        return "here"

    async def main() -> None:
        seen["loop"] = threading.get_ident()
        request, _ = make_request()
        await Tool(where).call({}, request)

    asyncio.run(main())
    assert seen["tool"] == seen["loop"]


def test_a_sync_tool_runs_off_the_event_loop_thread() -> None:
    seen: dict[str, int] = {}

    def where() -> str:
        """Say where."""
        seen["tool"] = threading.get_ident()
        return "there"

    async def main() -> dict[str, Any]:
        seen["loop"] = threading.get_ident()
        request, _ = make_request()
        return await Tool(where).call({}, request)

    assert asyncio.run(main())["content"][0]["text"] == "there"
    assert seen["tool"] != seen["loop"]


def test_the_context_exposes_user_endpoint_session_and_request() -> None:
    captured: dict[str, Any] = {}

    def inspect_context(ctx: Context) -> str:
        """Look at the context."""
        captured.update(user=ctx.user, endpoint=ctx.endpoint, session=ctx.session, request=ctx.request)
        return "ok"

    session = SessionState(protocol_version="2025-11-25", session_id="abc")
    request, _ = make_request(principal="ada", endpoint="server", session=session)
    asyncio.run(Tool(inspect_context).call({}, request))

    assert captured == {"user": "ada", "endpoint": "server", "session": session, "request": request}


def test_an_async_tool_reports_progress_and_logs_through_the_context() -> None:
    async def work(ctx: Context) -> str:
        """Work hard."""
        await ctx.info("Tool execution started")
        for done in (0, 50, 100):
            await ctx.report_progress(done, 100)
        await ctx.debug("below the threshold")
        return "done"

    request, sent = make_request(progress_token="tok-1", log_level="info")
    result = asyncio.run(Tool(work).call({}, request))

    assert result["content"][0]["text"] == "done"
    assert sent[0] == {
        "jsonrpc": "2.0",
        "method": "notifications/message",
        "params": {"level": "info", "data": "Tool execution started"},
    }
    assert [message["params"]["progress"] for message in sent[1:]] == [0, 50, 100]
    assert {message["params"]["progressToken"] for message in sent[1:]} == {"tok-1"}
    assert len(sent) == 4


def test_a_sync_tool_reports_progress_and_logs_through_the_sync_variants() -> None:
    def work(ctx: Context) -> str:
        """Work hard, synchronously."""
        ctx.log_sync("info", "started")
        ctx.report_progress_sync(1, 2, "half way")
        return "done"

    async def main() -> tuple[dict[str, Any], list[dict[str, Any]]]:
        request, sent = make_request(progress_token=5)
        return await Tool(work).call({}, request), sent

    result, sent = asyncio.run(main())

    assert result == {"content": [{"type": "text", "text": "done"}], "structuredContent": {"result": "done"}}
    assert [message["method"] for message in sent] == ["notifications/message", "notifications/progress"]
    assert sent[1]["params"] == {"progressToken": 5, "progress": 1, "total": 2, "message": "half way"}


def test_progress_is_not_sent_when_the_client_asked_for_none() -> None:
    async def work(ctx: Context) -> bool:
        """Work."""
        return await ctx.report_progress(1)

    request, sent = make_request()
    result = asyncio.run(Tool(work).call({}, request))

    assert result["structuredContent"] == {"result": False}
    assert sent == []


# ---------------------------------------------------------------- wire metadata


def test_title_annotations_icons_and_meta_are_published() -> None:
    def read_only() -> str:
        """Read something."""
        return ""

    tool = Tool(
        read_only,
        name="catalogue.read",
        title="Read the catalogue",
        annotations={"readOnlyHint": True, "openWorldHint": False},
        icons=[{"src": "https://example.com/icon.png", "mimeType": "image/png"}],
        meta={"example.com/owner": "shop"},
    )

    published = list_wire(tool)[0]
    assert published["name"] == "catalogue.read"
    assert published["title"] == "Read the catalogue"
    assert published["annotations"] == {"readOnlyHint": True, "openWorldHint": False}
    assert published["icons"] == [{"src": "https://example.com/icon.png", "mimeType": "image/png"}]
    assert published["_meta"] == {"example.com/owner": "shop"}
    assert published == tool.wire


def test_mcp_types_tool_annotations_are_accepted() -> None:
    from mcp_types import ToolAnnotations

    def erase() -> str:
        """Erase everything."""
        return ""

    tool = Tool(erase, annotations=ToolAnnotations(destructive_hint=True))

    assert tool.wire["annotations"] == {"destructiveHint": True}


def test_declaring_on_a_registry_keeps_the_function_callable() -> None:
    registry = Registry("callable")

    @registry.tool
    def double(x: int) -> int:
        """Double x."""
        return 2 * x

    @registry.tool(name="triple")
    async def triple(x: int) -> int:
        """Triple x."""
        return 3 * x

    assert double(2) == 4
    assert asyncio.run(triple(2)) == 6
    assert set(registry.tools) == {"double", "triple"}


# ---------------------------------------------------------------- docstrings and templates


def test_docstring_description_keeps_paragraphs_and_stops_at_the_first_section() -> None:
    description, arguments = parse_docstring(
        """Do a thing.

        In two paragraphs.

        Args:
            first: one.
            second: two,
                continued.

        Returns:
            nothing: at all.
        """
    )

    assert description == "Do a thing.\n\nIn two paragraphs."
    assert arguments == {"first": "one.", "second": "two, continued."}


@pytest.mark.parametrize(
    ("template", "uri", "expected"),
    [
        ("test://template/{id}/data", "test://template/123/data", {"id": "123"}),
        ("test://template/{id}/data", "test://template/1/2/data", None),
        ("file:///{+path}", "file:///etc/hosts", {"path": "etc/hosts"}),
        ("test://user/{name}", "test://user/ada%20l", {"name": "ada l"}),
        ("test://search{?q,page}", "test://search?q=mcp&page=2", {"q": "mcp", "page": "2"}),
        ("test://search{?q,page}", "test://search", {}),
        ("test://tree{/a,b}", "test://tree/x/y", {"a": "x", "b": "y"}),
        ("test://pair/{a,b}", "test://pair/1,2", {"a": "1", "b": "2"}),
    ],
)
def test_uri_templates_match_and_bind_variables(template: str, uri: str, expected: dict[str, str] | None) -> None:
    assert UriTemplate(template).match(uri) == expected
