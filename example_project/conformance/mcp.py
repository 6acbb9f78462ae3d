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
from example_project.conformance import task_tools
from mcp_django import Context, content
from mcp_django.runtime import notifications

registry = mcp_django.Registry("conformance")
task_tools.register(registry)

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


# ---------------------------------------------------------------- asking the client (both eras)
# Handshake era: the request goes to the client on the call's SSE stream. 2026 era: the call answers
# input_required and runs again when the client retries with the answers (docs/asking-the-client.md).

NAME_SCHEMA: dict[str, Any] = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
CONFIRM_SCHEMA: dict[str, Any] = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
COLOR_SCHEMA: dict[str, Any] = {"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]}
SEP1034_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "User name", "default": "John Doe"},
        "age": {"type": "integer", "description": "User age", "default": 30},
        "score": {"type": "number", "description": "User score", "default": 95.5},
        "status": {
            "type": "string",
            "description": "User status",
            "enum": ["active", "inactive", "pending"],
            "default": "active",
        },
        "verified": {"type": "boolean", "description": "Verification status", "default": True},
    },
}
SEP1330_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "untitledSingle": {
            "type": "string",
            "description": "Simple enum without titles",
            "enum": ["active", "inactive", "pending"],
        },
        "titledSingle": {
            "type": "string",
            "description": "Enum with titled options (oneOf)",
            "oneOf": [
                {"const": "low", "title": "Low Priority"},
                {"const": "medium", "title": "Medium Priority"},
                {"const": "high", "title": "High Priority"},
            ],
        },
        "legacyEnum": {
            "type": "string",
            "description": "Legacy enum with enumNames",
            "enum": ["small", "medium", "large"],
            "enumNames": ["Small Size", "Medium Size", "Large Size"],
        },
        "untitledMulti": {
            "type": "array",
            "description": "Multi-select without titles",
            "items": {"type": "string", "enum": ["read", "write", "execute"]},
        },
        "titledMulti": {
            "type": "array",
            "description": "Multi-select with titled options",
            "items": {
                "anyOf": [
                    {"const": "feature", "title": "New Feature"},
                    {"const": "bug", "title": "Bug Fix"},
                    {"const": "docs", "title": "Documentation"},
                ]
            },
        },
    },
    "required": ["untitledSingle", "titledSingle", "legacyEnum", "untitledMulti", "titledMulti"],
}


def _sampling(text: str, max_tokens: int) -> dict[str, Any]:
    messages = [{"role": "user", "content": {"type": "text", "text": text}}]
    return {"method": "sampling/createMessage", "params": {"messages": messages, "maxTokens": max_tokens}}


def _elicitation(message: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"method": "elicitation/create", "params": {"message": message, "requestedSchema": schema}}


def _sampled_text(result: Any) -> str:
    body = result.get("content") if isinstance(result, dict) else None
    return str(body.get("text", "")) if isinstance(body, dict) else ""


def _elicited(result: Any) -> str:
    return f"action={result.get('action')}, content={json.dumps(result.get('content') or {})}"


@registry.tool
async def test_sampling(prompt: str, ctx: Context) -> str:
    """Tests server-initiated sampling (LLM completion request)"""
    result = await ctx.sample([{"role": "user", "content": {"type": "text", "text": prompt}}], max_tokens=100)
    return f"LLM response: {_sampled_text(result)}"


@registry.tool
async def test_elicitation(message: str, ctx: Context) -> str:
    """Tests server-initiated elicitation (user input request)"""
    schema = {
        "type": "object",
        "properties": {"username": {"type": "string"}, "email": {"type": "string"}},
        "required": ["username", "email"],
    }
    return f"User response: {_elicited(await ctx.elicit(message, schema))}"


@registry.tool
async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
    """Tests elicitation with default values for all primitive types (SEP-1034)"""
    result = await ctx.elicit("Please provide user information", SEP1034_SCHEMA)
    return f"Elicitation result: {_elicited(result)}"


@registry.tool
async def test_elicitation_sep1330_enums(ctx: Context) -> str:
    """Tests elicitation with enum schema variations per SEP-1330"""
    result = await ctx.elicit("Please select values using different enum schema types", SEP1330_SCHEMA)
    return f"Elicitation completed: {_elicited(result)}"


@registry.tool
async def test_input_required_result_elicitation(ctx: Context) -> str:
    """Tests InputRequiredResult with a single elicitation request"""
    answer = await ctx.elicit("What is your name?", NAME_SCHEMA, key="user_name")
    return f"Hello, {(answer.get('content') or {}).get('name', 'stranger')}!"


@registry.tool
async def test_input_required_result_sampling(ctx: Context) -> str:
    """Tests InputRequiredResult with a single sampling request"""
    answer = await ctx.request_input({"capital_question": _sampling("What is the capital of France?", 100)})
    return f"Model said: {_sampled_text(answer['capital_question'])}"


@registry.tool
async def test_input_required_result_list_roots(ctx: Context) -> str:
    """Tests InputRequiredResult with a single roots/list request"""
    answer = await ctx.list_roots(key="client_roots")
    return f"Client exposed {len(answer.get('roots', []))} root(s)."


@registry.tool
async def test_input_required_result_request_state(ctx: Context) -> str:
    """Tests requestState round-tripping in the InputRequiredResult flow"""
    nonce = ctx.state.setdefault("nonce", "request-state-nonce")
    await ctx.elicit("Please confirm", CONFIRM_SCHEMA, key="confirm")
    return "state-ok: confirmation received" if nonce == "request-state-nonce" else "state lost"


@registry.tool
async def test_input_required_result_multiple_inputs(ctx: Context) -> str:
    """Tests InputRequiredResult carrying elicitation, sampling and roots requests together"""
    await ctx.request_input(
        {
            "user_name": _elicitation("What is your name?", NAME_SCHEMA),
            "greeting": _sampling("Generate a greeting", 50),
            "client_roots": {"method": "roots/list", "params": {}},
        }
    )
    return "All inputs received."


@registry.tool
async def test_input_required_result_multi_round(ctx: Context) -> str:
    """Tests a three-round InputRequiredResult flow with evolving requestState"""
    step1 = await ctx.elicit("Step 1: What is your name?", NAME_SCHEMA, key="step1")
    step2 = await ctx.elicit("Step 2: What is your favorite color?", COLOR_SCHEMA, key="step2")
    return f"{(step1.get('content') or {}).get('name')} likes {(step2.get('content') or {}).get('color')}."


@registry.tool
async def test_input_required_result_tampered_state(ctx: Context) -> str:
    """Tests that the server rejects a tampered requestState echo (the state is signed)"""
    await ctx.elicit("Please confirm", CONFIRM_SCHEMA, key="confirm")
    return "state-ok: the signed requestState verified"


@registry.tool
async def test_input_required_result_capabilities(ctx: Context) -> str:
    """Tests that inputRequests only include methods the client declared support for"""
    wanted: dict[str, Any] = {}
    if ctx.request.has_capability("sampling"):
        wanted["sample"] = _sampling("Say hello", 50)
    if ctx.request.has_capability("elicitation"):
        wanted["ask"] = _elicitation("What is your name?", NAME_SCHEMA)
    await ctx.request_input(wanted)
    return "Asked only for what the client supports."


# ----------------------------------------------------------------- list changes (SEP-2575 listen)
# Our registries are frozen while serving; these tools announce a change the way a project would after
# an admin toggles a provider: through mcp_django.runtime.notifications, which reaches every listening client.


@registry.tool
async def test_trigger_tool_change(ctx: Context) -> str:
    """Announces a tool list change to every listening client (subscriptions/listen, GET streams)"""
    await notifications.send_notification(ctx.endpoint, "notifications/tools/list_changed")
    return "tool list changed"


@registry.tool
async def test_trigger_prompt_change(ctx: Context) -> str:
    """Announces a prompt list change to every listening client (subscriptions/listen, GET streams)"""
    await notifications.send_notification(ctx.endpoint, "notifications/prompts/list_changed")
    return "prompt list changed"


@registry.tool
async def test_reconnection(ctx: Context) -> str:
    """Tests SSE polling by closing the stream mid-call; the result arrives on the resumed stream (SEP-1699)"""
    await ctx.info("Before disconnect")
    await ctx.close_stream()
    await asyncio.sleep(0.2)  # the client reconnects with Last-Event-ID meanwhile; nothing is lost either way
    await ctx.info("After reconnect")
    return "Reconnection test completed"


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


@registry.prompt
async def test_input_required_result_prompt(ctx: Context) -> list[content.PromptMessage]:
    """A prompt that asks the client for context before it is built (SEP-2322)"""
    schema = {"type": "object", "properties": {"context": {"type": "string"}}, "required": ["context"]}
    answer = await ctx.elicit("What context should the prompt use?", schema, key="user_context")
    return [content.user_message(f"Use this context: {(answer.get('content') or {}).get('context', '')}")]


@registry.completion(prompt="test_prompt_with_arguments", argument="arg1")
def complete_arg1(value: str) -> list[str]:
    """No suggestions: the suite only checks that completion/complete answers."""
    return []
