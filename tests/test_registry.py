"""Registries and the Backend they serve: lists, resources, prompts, completions, names and freezing."""

from __future__ import annotations

import asyncio
import importlib.metadata
import subprocess
import sys
from pathlib import Path
from typing import Annotated, Any

import pytest
from pydantic import Field

import mcp_django
from mcp_django import Context, Registry, RegistryFrozen, content
from mcp_django.protocol import Connection, MessageHandler
from mcp_django.protocol.backend import Backend
from mcp_django.protocol.jsonrpc import InternalError, InvalidParams, ResourceNotFound
from mcp_django.registry import RegistryBackend, all_registries
from tests.declarations_support import make_request, wire

ROOT = Path(__file__).resolve().parent.parent
PNG = b"\x89PNG\r\n\x1a\n"


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def serve(registry: Registry) -> RegistryBackend:
    return registry.backend()


# ---------------------------------------------------------------- the public module


def test_importing_mcp_django_imports_no_django() -> None:
    code = "import sys, mcp_django, mcp_django.protocol; assert 'django' not in sys.modules, 'django imported'"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_the_package_offers_endpoint_and_the_protocol_error_base_class_on_its_face() -> None:
    from mcp_django.exceptions import MCPError
    from mcp_django.urls import endpoint

    assert mcp_django.endpoint is endpoint
    assert mcp_django.MCPError is MCPError
    assert issubclass(InvalidParams, mcp_django.MCPError)
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        mcp_django.no_such_name  # noqa: B018  # the face's lazy lookup answers for its own name only


def test_importing_mcp_django_loads_neither_the_url_machinery_nor_the_transports() -> None:
    code = (
        "import sys, mcp_django\n"
        "print(sorted(m for m in sys.modules if m.startswith(('mcp_django.urls', 'mcp_django.transports'))))"
    )
    loaded = subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, capture_output=True, text=True)
    assert loaded.stdout.strip() == "[]"


def test_module_level_decorators_declare_on_the_default_registry() -> None:
    assert mcp_django.tool == mcp_django.default_registry.tool
    assert mcp_django.resource == mcp_django.default_registry.resource
    assert mcp_django.prompt == mcp_django.default_registry.prompt
    assert mcp_django.completion == mcp_django.default_registry.completion
    assert mcp_django.__version__ == importlib.metadata.version("django-mcp-host")


def test_every_registry_is_listed_by_all_registries() -> None:
    registry = Registry("listed")

    assert registry in all_registries()
    assert mcp_django.default_registry in all_registries()


def test_the_backend_satisfies_the_protocol_backend_contract() -> None:
    assert isinstance(Registry("contract").backend(), Backend)


# ---------------------------------------------------------------- tools through the backend


def test_tools_are_listed_sorted_by_name_and_valid_on_the_wire() -> None:
    registry = Registry("sorted")

    @registry.tool
    def zebra() -> str:
        """Z."""
        return "z"

    @registry.tool(name="alpha", title="Alpha")
    def anything() -> str:
        """A."""
        return "a"

    tools = run(serve(registry).list_tools(make_request("tools/list")[0]))

    assert [tool["name"] for tool in tools] == ["alpha", "zebra"]
    assert wire("tools/list", {"tools": list(tools)})["tools"] == list(tools)


def test_calling_an_unknown_tool_is_invalid_params() -> None:
    with pytest.raises(InvalidParams, match="Unknown tool: nope"):
        run(serve(Registry("empty")).call_tool("nope", {}, make_request()[0]))


def test_a_registry_served_by_the_message_handler_answers_tools_call() -> None:
    registry = Registry("served")

    @registry.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    handler = MessageHandler(registry.backend(), server_info={"name": "t", "version": "1"})
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "add", "arguments": {"a": 2, "b": 3}, "_meta": meta},
    }
    reply = run(handler.handle(message, Connection(version_header="2026-07-28")))

    assert reply is not None
    assert reply["result"]["structuredContent"] == {"result": 5}
    assert reply["result"]["content"] == [{"type": "text", "text": "5"}]


# ---------------------------------------------------------------- capabilities


def test_capabilities_name_only_the_features_the_registry_has() -> None:
    registry = Registry("caps")
    assert registry.backend().capabilities() == {}

    @registry.tool
    def t() -> str:
        """T."""
        return ""

    assert registry.backend().capabilities() == {"tools": {}}

    @registry.resource("test://fixed")
    def fixed() -> str:
        """Fixed."""
        return ""

    assert registry.backend().capabilities() == {"tools": {}, "resources": {}}

    @registry.resource("test://item/{id}")
    def item(id: str) -> str:
        """Item."""
        return id

    assert registry.backend().capabilities() == {"tools": {}, "resources": {}, "completions": {}}


def test_prompts_bring_the_completions_capability() -> None:
    registry = Registry("prompt-caps")

    @registry.prompt
    def hello() -> str:
        """Hello."""
        return "hello"

    assert registry.capabilities() == {"prompts": {}, "completions": {}}


# ---------------------------------------------------------------- resources


@pytest.fixture
def resources() -> Registry:
    registry = Registry("resources")

    @registry.resource("test://static-text", name="static_text")
    def static_text() -> str:
        """A static text resource."""
        return "This is the content of the static text resource."

    @registry.resource("test://static-binary", mime_type="image/png")
    def static_binary() -> bytes:
        """A static binary resource."""
        return PNG

    @registry.resource("test://template/{id}/data", mime_type="application/json")
    def template_data(id: str) -> dict[str, Any]:
        """Data for an id."""
        return {"id": id, "templateTest": True, "data": f"Data for ID: {id}"}

    @registry.resource("test://orders/{number}")
    async def order(number: int, ctx: Context) -> str | None:
        """An order, by number."""
        return f"order {number} for {ctx.user}" if number < 100 else None

    @registry.resource("test://many")
    def many() -> list[Any]:
        """Several contents."""
        return [
            content.resource_contents("test://many#1", text="one"),
            content.resource_contents("test://many#2", blob=b"\x01", mime_type="application/octet-stream"),
        ]

    @registry.resource("test://broken")
    def broken() -> str:
        """Always fails."""
        raise RuntimeError("secret detail")

    return registry


def read(registry: Registry, uri: str, **options: Any) -> dict[str, Any]:
    request, _ = make_request("resources/read", **options)
    return wire("resources/read", run(serve(registry).read_resource(uri, request)))


def test_resources_and_templates_are_listed_with_uri_name_description_and_mime_type(resources: Registry) -> None:
    request = make_request("resources/list")[0]
    listed = run(serve(resources).list_resources(request))
    templates = run(serve(resources).list_resource_templates(request))

    assert wire("resources/list", {"resources": list(listed)})["resources"] == list(listed)
    assert wire("resources/templates/list", {"resourceTemplates": list(templates)})["resourceTemplates"] == list(
        templates
    )
    assert {item["uri"]: item["mimeType"] for item in listed}["test://static-binary"] == "image/png"
    assert listed[0]["name"] == "broken"
    assert all(item["description"] for item in listed)
    assert [item["uriTemplate"] for item in templates] == ["test://orders/{number}", "test://template/{id}/data"]


def test_a_fixed_text_resource_reads_as_text_with_its_mime_type(resources: Registry) -> None:
    assert read(resources, "test://static-text") == {
        "contents": [
            {
                "uri": "test://static-text",
                "mimeType": "text/plain",
                "text": "This is the content of the static text resource.",
            }
        ]
    }


def test_a_binary_resource_reads_as_a_base64_blob(resources: Registry) -> None:
    assert read(resources, "test://static-binary")["contents"] == [
        {"uri": "test://static-binary", "mimeType": "image/png", "blob": "iVBORw0KGgo="}
    ]


def test_a_template_passes_its_variables_to_the_function(resources: Registry) -> None:
    assert read(resources, "test://template/123/data")["contents"] == [
        {
            "uri": "test://template/123/data",
            "mimeType": "application/json",
            "text": '{"id":"123","templateTest":true,"data":"Data for ID: 123"}',
        }
    ]


def test_template_variables_are_coerced_and_the_context_is_injected(resources: Registry) -> None:
    assert read(resources, "test://orders/42", principal="ada")["contents"][0]["text"] == "order 42 for ada"


@pytest.mark.parametrize(
    "uri",
    ["test://nonexistent-resource-for-conformance-testing", "test://orders/forty-two", "test://orders/500"],
    ids=["unknown-uri", "variable-fails-validation", "function-returned-none"],
)
def test_an_unserved_uri_raises_resource_not_found(resources: Registry, uri: str) -> None:
    with pytest.raises(ResourceNotFound) as raised:
        read(resources, uri)
    assert raised.value.data == {"uri": uri}


def test_a_resource_may_answer_with_several_contents_defaulting_to_its_mime_type(resources: Registry) -> None:
    assert read(resources, "test://many")["contents"] == [
        {"uri": "test://many#1", "mimeType": "text/plain", "text": "one"},
        {"uri": "test://many#2", "mimeType": "application/octet-stream", "blob": "AQ=="},
    ]


def test_a_failing_resource_is_an_internal_error_without_detail(resources: Registry) -> None:
    with pytest.raises(InternalError) as raised:
        read(resources, "test://broken")
    assert "secret" not in raised.value.message


def test_a_template_variable_without_a_parameter_is_rejected_at_declaration() -> None:
    registry = Registry("bad-template")
    with pytest.raises(mcp_django.DeclarationError, match="no parameter for id"):

        @registry.resource("test://thing/{id}")
        def thing() -> str:
            """Thing."""
            return ""


# ---------------------------------------------------------------- prompts


@pytest.fixture
def prompts() -> Registry:
    registry = Registry("prompts")

    @registry.prompt
    def test_simple_prompt() -> str:
        """A simple prompt without arguments."""
        return "This is a simple prompt for testing."

    @registry.prompt
    def test_prompt_with_arguments(arg1: str, arg2: Annotated[str, Field(description="Second argument")]) -> str:
        """A prompt with required arguments.

        Args:
            arg1: First argument.
        """
        return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"

    @registry.prompt(name="test_prompt_with_embedded_resource")
    def embedded(resourceUri: str) -> list[Any]:
        """A prompt embedding a resource."""
        return [
            content.user_message(
                content.embedded_resource(
                    resourceUri, text="Embedded resource content for testing.", mime_type="text/plain"
                )
            ),
            "Please process the embedded resource above.",
        ]

    @registry.prompt
    def test_prompt_with_image() -> list[Any]:
        """A prompt with an image."""
        return [content.image(PNG, "image/png"), content.user_message("Please analyze the image above.")]

    @registry.prompt
    def conversation(topic: str = "tea") -> list[Any]:
        """A short conversation."""
        return [content.user_message(f"Tell me about {topic}"), content.assistant_message("Gladly.")]

    @registry.completion(prompt="test_prompt_with_arguments", argument="arg1")
    def complete_arg1(value: str, context_arguments: dict[str, str]) -> list[str]:
        return [word for word in ("paris", "park", "parse", "zoo") if word.startswith(value)]

    return registry


def get_prompt(registry: Registry, name: str, arguments: dict[str, str] | None = None) -> dict[str, Any]:
    request, _ = make_request("prompts/get")
    return wire("prompts/get", run(serve(registry).get_prompt(name, arguments or {}, request)))


def test_prompts_are_listed_with_arguments_from_the_signature(prompts: Registry) -> None:
    listed = run(serve(prompts).list_prompts(make_request("prompts/list")[0]))

    assert wire("prompts/list", {"prompts": list(listed)})["prompts"] == list(listed)
    by_name = {prompt["name"]: prompt for prompt in listed}
    assert by_name["test_prompt_with_arguments"]["arguments"] == [
        {"name": "arg1", "description": "First argument.", "required": True},
        {"name": "arg2", "description": "Second argument", "required": True},
    ]
    assert by_name["conversation"]["arguments"] == [{"name": "topic", "required": False}]
    assert "arguments" not in by_name["test_simple_prompt"]
    assert [prompt["name"] for prompt in listed] == sorted(by_name)


def test_a_string_prompt_is_one_user_text_message(prompts: Registry) -> None:
    assert get_prompt(prompts, "test_prompt_with_arguments", {"arg1": "hello", "arg2": "world"}) == {
        "description": "A prompt with required arguments.",
        "messages": [
            {"role": "user", "content": {"type": "text", "text": "Prompt with arguments: arg1='hello', arg2='world'"}}
        ],
    }


def test_a_prompt_may_return_messages_blocks_and_strings(prompts: Registry) -> None:
    embedded = get_prompt(prompts, "test_prompt_with_embedded_resource", {"resourceUri": "test://x"})["messages"]
    image = get_prompt(prompts, "test_prompt_with_image")["messages"]
    conversation = get_prompt(prompts, "conversation")["messages"]

    assert embedded[0]["content"]["resource"] == {
        "uri": "test://x",
        "mimeType": "text/plain",
        "text": "Embedded resource content for testing.",
    }
    assert embedded[1] == content.user_message("Please process the embedded resource above.")
    assert image[0] == {"role": "user", "content": {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}}
    assert [message["role"] for message in conversation] == ["user", "assistant"]


def test_a_missing_required_prompt_argument_is_invalid_params_naming_it(prompts: Registry) -> None:
    with pytest.raises(InvalidParams, match="Missing required arguments for prompt test_prompt_with_arguments: arg2"):
        get_prompt(prompts, "test_prompt_with_arguments", {"arg1": "x"})


def test_an_unknown_prompt_is_invalid_params(prompts: Registry) -> None:
    with pytest.raises(InvalidParams, match="Unknown prompt: nope"):
        get_prompt(prompts, "nope")


# ---------------------------------------------------------------- completions


def complete(registry: Registry, ref: dict[str, Any], name: str, value: str) -> dict[str, Any]:
    request, _ = make_request("completion/complete")
    completion = run(serve(registry).complete(ref, {"name": name, "value": value}, {}, request))
    return wire("completion/complete", {"completion": completion})["completion"]


def test_a_completion_provider_suggests_values(prompts: Registry) -> None:
    ref = {"type": "ref/prompt", "name": "test_prompt_with_arguments"}

    assert complete(prompts, ref, "arg1", "par") == {"values": ["paris", "park", "parse"], "total": 3, "hasMore": False}


def test_an_argument_without_a_provider_completes_to_nothing(prompts: Registry) -> None:
    ref = {"type": "ref/prompt", "name": "test_prompt_with_arguments"}

    assert complete(prompts, ref, "arg2", "x") == {"values": [], "total": 0, "hasMore": False}


def test_completing_an_unknown_prompt_is_invalid_params(prompts: Registry) -> None:
    with pytest.raises(InvalidParams, match="Unknown prompt: nope"):
        complete(prompts, {"type": "ref/prompt", "name": "nope"}, "arg1", "")


def test_completions_are_capped_at_a_hundred_values() -> None:
    registry = Registry("many-completions")

    @registry.resource("test://item/{id}")
    def item(id: str) -> str:
        """Item."""
        return id

    @registry.completion(resource="test://item/{id}", argument="id")
    async def ids(value: str, ctx: Context) -> list[str]:
        return [f"{value}{number}" for number in range(250)]

    result = complete(registry, {"type": "ref/resource", "uri": "test://item/{id}"}, "id", "n")

    assert len(result["values"]) == 100
    assert result["values"][0] == "n0"
    assert (result["total"], result["hasMore"]) == (250, True)


def test_a_completion_receives_the_context_arguments() -> None:
    registry = Registry("context-arguments")

    @registry.prompt
    def trip(country: str, city: str) -> str:
        """Plan a trip."""
        return f"{city}, {country}"

    @registry.completion(prompt="trip", argument="city")
    def cities(value: str, context_arguments: dict[str, str]) -> list[str]:
        return {"NO": ["Oslo", "Bergen"], "FR": ["Paris"]}[context_arguments["country"]]

    request, _ = make_request("completion/complete")
    result = run(
        registry.backend().complete(
            {"type": "ref/prompt", "name": "trip"}, {"name": "city", "value": ""}, {"country": "NO"}, request
        )
    )

    assert result["values"] == ["Oslo", "Bergen"]


# ---------------------------------------------------------------- names and freezing


def test_name_errors_reports_bad_names_duplicates_and_dangling_completions() -> None:
    registry = Registry("names")

    @registry.tool(name="has space")
    def one() -> str:
        """One."""
        return ""

    @registry.tool(name="ok.name-1")
    def two() -> str:
        """Two."""
        return ""

    @registry.tool(name="ok.name-1")
    def three() -> str:
        """Three."""
        return ""

    @registry.prompt(name="x" * 129)
    def long() -> str:
        """Long."""
        return ""

    @registry.completion(prompt="missing", argument="a")
    def dangling(value: str) -> list[str]:
        return []

    errors = registry.name_errors()

    assert errors[0] == "tool name 'has space' must be 1-128 characters of A-Z a-z 0-9 _ - ."
    assert errors[1].startswith("prompt name 'xxxx")
    assert errors[2].startswith("tool 'ok.name-1' is declared twice (tests.test_registry.")
    assert errors[3] == "completion names unknown prompt 'missing'"
    assert len(errors) == 4
    assert registry.tools["ok.name-1"].fn is two


def test_a_name_with_a_trailing_newline_is_refused() -> None:
    registry = Registry("newline")

    @registry.tool(name="lookup\n")
    def lookup() -> str:
        """Lookup."""
        return ""

    assert registry.name_errors() == ["tool name 'lookup\\n' must be 1-128 characters of A-Z a-z 0-9 _ - ."]


def test_a_frozen_registry_refuses_declarations_with_a_clear_message() -> None:
    registry = Registry("frozen")

    @registry.tool
    def before() -> str:
        """Before."""
        return ""

    registry.freeze()

    assert registry.frozen
    with pytest.raises(RegistryFrozen, match=r"Registry 'frozen' is frozen: cannot declare tool 'after'\. .*mcp\.py"):

        @registry.tool
        def after() -> str:
            """After."""
            return ""

    assert list(registry.tools) == ["before"]
