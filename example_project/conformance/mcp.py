"""The official MCP conformance suite's fixture server, served at ``/conformance/mcp``.

Names and payloads are the suite's contract (``src/scenarios/server/*.ts`` in
modelcontextprotocol/conformance, and the python-sdk's everything-server): change none of them.
Everything here lives on its own registry, so none of it leaks onto the project's default ``/mcp``.

Fixtures that need the server to ask the client something (legacy sampling/elicitation over the
request's stream, 2026 ``input_required`` results, ``subscriptions/listen`` hooks) arrive with the
issues that build those features; the expected-failures files in ``tests/conformance/`` list them.
"""

from __future__ import annotations

import asyncio
import json
from typing import Annotated, Any

from pydantic import Field

import mcp_django
from mcp_django import Context, content

registry = mcp_django.Registry("conformance")

TEST_IMAGE_BASE64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
TEST_AUDIO_BASE64 = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
STEP_DELAY_S = 0.05
"""The pause between the notifications of the logging and progress fixtures (the suite's ~50 ms)."""


# ---------------------------------------------------------------------------------------------- tools


@registry.tool
def test_simple_text() -> str:
    """Tests simple text content response"""
    return "This is a simple text response for testing."


@registry.tool
def test_image_content() -> list[content.ContentBlock]:
    """Tests image content response"""
    return [content.image(TEST_IMAGE_BASE64, "image/png")]


@registry.tool
def test_audio_content() -> list[content.ContentBlock]:
    """Tests audio content response"""
    return [content.audio(TEST_AUDIO_BASE64, "audio/wav")]


@registry.tool
def test_embedded_resource() -> list[content.ContentBlock]:
    """Tests embedded resource content response"""
    return [
        content.embedded_resource(
            "test://embedded-resource", text="This is an embedded resource content.", mime_type="text/plain"
        )
    ]


@registry.tool
def test_multiple_content_types() -> list[content.ContentBlock]:
    """Tests response with multiple content types (text, image, resource)"""
    return [
        content.text("Multiple content types test:"),
        content.image(TEST_IMAGE_BASE64, "image/png"),
        content.embedded_resource(
            "test://mixed-content-resource", text='{"test": "data", "value": 123}', mime_type="application/json"
        ),
    ]


@registry.tool
async def test_tool_with_logging(ctx: Context) -> str:
    """Tests tool that emits log messages during execution"""
    await ctx.info("Tool execution started")
    await asyncio.sleep(STEP_DELAY_S)
    await ctx.info("Tool processing data")
    await asyncio.sleep(STEP_DELAY_S)
    await ctx.info("Tool execution completed")
    return "Tool with logging executed successfully"


@registry.tool
async def test_tool_with_progress(ctx: Context) -> str:
    """Tests tool that reports progress notifications"""
    await ctx.report_progress(0, 100, "Completed step 0 of 100")
    await asyncio.sleep(STEP_DELAY_S)
    await ctx.report_progress(50, 100, "Completed step 50 of 100")
    await asyncio.sleep(STEP_DELAY_S)
    await ctx.report_progress(100, 100, "Completed step 100 of 100")
    return str(ctx.progress_token if ctx.progress_token is not None else 0)


@registry.tool
def test_error_handling() -> str:
    """Tests error response handling"""
    raise mcp_django.ToolError("This tool intentionally returns an error for testing")


@registry.tool
def test_x_mcp_header(
    region: Annotated[
        str,
        Field(
            description="Mirrored into the Mcp-Param-Region header",
            json_schema_extra={"x-mcp-header": "Region"},
        ),
    ] = "<none>",
) -> str:
    """Tests SEP-2243 Mcp-Param-* server-side validation"""
    return f"region={region}"


@registry.tool
async def test_missing_capability(ctx: Context) -> str:
    """Tests that a missing required client capability is a -32021 JSON-RPC error (needs ``sampling``)"""
    ctx.request.require_capability("sampling")
    return "Client declared sampling capability; proceeding."


@registry.tool
async def test_logging_tool(ctx: Context) -> str:
    """Diagnostic logging validator tool: logs only when the request opted in with a log level"""
    await ctx.info("Diagnostic trace logging activated")
    return "Logging evaluated"


@registry.tool
async def test_streaming_elicitation(ctx: Context) -> str:
    """Diagnostic tool validating response progress streams: progress, then the result, never a request"""
    await ctx.report_progress(50, 100, "halfway")
    return "Streaming complete"


# SEP-1613 / SEP-2106: every 2020-12 keyword the suite looks for must reach tools/list verbatim.
# Copied from the python-sdk everything-server.
JSON_SCHEMA_2020_12_INPUT_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


@registry.tool(name="json_schema_2020_12_tool", input_schema=JSON_SCHEMA_2020_12_INPUT_SCHEMA)
def json_schema_2020_12_tool(**arguments: Any) -> str:
    """Tests JSON Schema 2020-12 keyword preservation in tools/list"""
    return "json_schema_2020_12_tool"


# ------------------------------------------------------------------------------------------ resources


@registry.resource("test://static-text", mime_type="text/plain")
def static_text_resource() -> str:
    """A static text resource for testing"""
    return "This is the content of the static text resource."


@registry.resource("test://static-binary", mime_type="image/png")
def static_binary_resource() -> bytes:
    """A static binary resource (image) for testing"""
    import base64

    return base64.b64decode(TEST_IMAGE_BASE64)


@registry.resource("test://template/{id}/data", mime_type="application/json")
def template_resource(id: str) -> str:
    """A resource template with parameter substitution"""
    return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})


@registry.resource("test://watched-resource", mime_type="text/plain")
def watched_resource() -> str:
    """A resource that can be subscribed to for updates"""
    return "Watched resource content"


# -------------------------------------------------------------------------------------------- prompts


@registry.prompt
def test_simple_prompt() -> list[content.PromptMessage]:
    """A simple prompt without arguments"""
    return [content.user_message("This is a simple prompt for testing.")]


@registry.prompt
def test_prompt_with_arguments(arg1: str, arg2: str) -> list[content.PromptMessage]:
    """A prompt with required arguments"""
    return [content.user_message(f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'")]


@registry.prompt
def test_prompt_with_embedded_resource(resourceUri: str) -> list[content.PromptMessage]:
    """A prompt that includes an embedded resource"""
    return [
        content.user_message(
            content.embedded_resource(
                resourceUri, text="Embedded resource content for testing.", mime_type="text/plain"
            )
        ),
        content.user_message("Please process the embedded resource above."),
    ]


@registry.prompt
def test_prompt_with_image() -> list[content.PromptMessage]:
    """A prompt that includes image content"""
    return [
        content.user_message(content.image(TEST_IMAGE_BASE64, "image/png")),
        content.user_message("Please analyze the image above."),
    ]


# ----------------------------------------------------------------------------------------- completion


@registry.completion(prompt="test_prompt_with_arguments", argument="arg1")
def complete_arg1(value: str) -> list[str]:
    """No suggestions: the suite only checks that completion/complete answers."""
    return []
