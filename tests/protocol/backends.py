"""A small in-memory `Backend` for the protocol tests: no Django, no registry."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from mcp_django.protocol import InvalidParams, RequestContext, ResourceNotFound

NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def _text(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}


class EchoBackend:
    """Serves a handful of tools, resources and prompts, enough to exercise every method."""

    def __init__(self, *, tools: int = 3, features: Sequence[str] = ("tools", "resources", "prompts", "completions")):
        self.features = tuple(features)
        self.tools = [
            {"name": f"tool_{index:03}", "description": f"Tool {index}", "inputSchema": {"type": "object"}}
            for index in range(tools)
        ]
        self.tools.append(
            {
                "name": "echo",
                "description": "Echo the text back",
                "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
            }
        )
        self.started = asyncio.Event()
        self.hidden: set[str] = set()
        """Resource URIs the caller may not read (as if out of its scope)."""

    def capabilities(self) -> dict[str, Any]:
        return {feature: {} for feature in self.features}

    async def list_tools(self, ctx: RequestContext) -> Sequence[Mapping[str, Any]]:
        if ctx.meta.get("ask"):
            await ctx.elicit("Lists cannot ask", NAME_SCHEMA)
        return self.tools

    async def call_tool(self, name: str, arguments: Mapping[str, Any], ctx: RequestContext) -> Mapping[str, Any]:
        if name == "echo":
            return {"content": [{"type": "text", "text": str(arguments.get("text", ""))}]}
        if name == "progress":
            for step in range(3):
                await ctx.report_progress(step, 2, f"step {step}")
            await ctx.log("info", "halfway")
            return {"content": [{"type": "text", "text": "done"}]}
        if name == "needs_sampling":
            ctx.require_capability("sampling")
            return {"content": []}
        if name == "boom":
            raise RuntimeError("secret internal detail")
        if name == "bad_result":
            return {"content": "not a list"}
        if name == "ask_name":
            answer = await ctx.elicit("What is your name?", NAME_SCHEMA, key="user_name")
            return _text(f"Hello, {answer['content']['name']}!")
        if name == "ask_twice":
            ctx.state.setdefault("rounds", 0)
            ctx.state["rounds"] += 1
            first = await ctx.elicit("Step 1", NAME_SCHEMA, key="step1")
            second = await ctx.elicit("Step 2", NAME_SCHEMA, key="step2")
            return _text(f"{first['content']['name']}+{second['content']['name']} after {ctx.state['rounds']} rounds")
        if name == "ask_all":
            answers = await ctx.request_input(
                {
                    "user_name": {
                        "method": "elicitation/create",
                        "params": {"message": "Name?", "requestedSchema": NAME_SCHEMA},
                    },
                    "greeting": {
                        "method": "sampling/createMessage",
                        "params": {
                            "messages": [{"role": "user", "content": {"type": "text", "text": "Hi"}}],
                            "maxTokens": 5,
                        },
                    },
                    "client_roots": {"method": "roots/list", "params": {}},
                }
            )
            return _text(",".join(sorted(answers)))
        if name == "ask_roots":  # a request without params, as a remote's `roots/list` often is
            answers = await ctx.request_input({"roots": {"method": "roots/list"}})
            return _text(",".join(root["uri"] for root in answers["roots"]["roots"]))
        if name == "slow":
            self.started.set()
            await asyncio.sleep(30)
            return {"content": []}
        raise InvalidParams(f"Unknown tool: {name}")

    async def list_resources(self, ctx: RequestContext) -> Sequence[Mapping[str, Any]]:
        return [{"uri": "test://a", "name": "a", "description": "A", "mimeType": "text/plain"}]

    async def list_resource_templates(self, ctx: RequestContext) -> Sequence[Mapping[str, Any]]:
        return [{"uriTemplate": "test://t/{id}", "name": "t", "description": "T"}]

    async def read_resource(self, uri: str, ctx: RequestContext) -> Mapping[str, Any]:
        if uri == "test://a" and uri not in self.hidden:
            return {"contents": [{"uri": uri, "mimeType": "text/plain", "text": "A"}]}
        raise ResourceNotFound(uri)

    async def readable(self, uri: str, ctx: RequestContext) -> bool:
        return uri not in self.hidden and (uri == "test://a" or uri.startswith("test://t/"))

    async def list_prompts(self, ctx: RequestContext) -> Sequence[Mapping[str, Any]]:
        return [{"name": "greet", "description": "Greet", "arguments": [{"name": "who", "required": True}]}]

    async def get_prompt(self, name: str, arguments: Mapping[str, str], ctx: RequestContext) -> Mapping[str, Any]:
        if name != "greet":
            raise InvalidParams(f"Unknown prompt: {name}")
        if "who" not in arguments:
            raise InvalidParams("Missing required argument: who")
        return {"messages": [{"role": "user", "content": {"type": "text", "text": f"Hello {arguments['who']}"}}]}

    async def complete(
        self,
        ref: Mapping[str, Any],
        argument: Mapping[str, Any],
        context_arguments: Mapping[str, str],
        ctx: RequestContext,
    ) -> Mapping[str, Any]:
        return {"values": [f"{argument['value']}{index}" for index in range(150)]}
