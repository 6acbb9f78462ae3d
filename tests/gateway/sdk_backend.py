"""A backend for the gateway tests built on the official SDK (`mcp.server.MCPServer`), served over stdio or HTTP.

    python -m tests.gateway.sdk_backend stdio
    python -m tests.gateway.sdk_backend http <port>

Its tools let a test see what reached it: `seen_headers` returns the HTTP headers of the request,
`slow` sleeps (so a test can kill the process or time out mid-call), `announce` sends
`notifications/tools/list_changed` (`announce_here` on the call's own stream), `locate` mirrors its
`region` argument in an `Mcp-Param-Region` header, `log` logs a message about the call, `roots` asks
the client for its roots (`roots/list`, without params), `environment` names the variables of the
server's environment, `seen_meta` returns the call's `_meta`, `visit` sends the user to a URL (URL-mode
elicitation), `link` (and the prompt `with_note`) link to and embed the resource `note://greeting`; `card`,
`app_only` and the resource `ui://sdk/widget` are MCP Apps data a hostile remote may send; `repeat` answers
long text without structured content.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Annotated, Any

from mcp.server.mcpserver import Context, ListRoots, MCPServer, Resolve
from mcp.server.mcpserver.prompts.base import UserMessage
from mcp_types import (
    EmbeddedResource,
    InputRequiredResult,
    ListRootsResult,
    ResourceLink,
    TextResourceContents,
    ToolListChangedNotification,
)
from pydantic import Field

server = MCPServer("sdk-backend", version="9.9.9", instructions="The official SDK behind a gateway.")


@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


@server.tool(structured_output=False)
def repeat(text: str, times: int) -> str:
    """The text repeated, as text only (no structured content): a long answer to cap."""
    return text * times


@server.tool()
async def slow(seconds: float) -> str:
    """Sleep, then answer."""
    await asyncio.sleep(seconds)
    return f"slept {seconds}"


@server.tool()
def seen_headers(ctx: Context) -> dict[str, Any]:
    """The HTTP headers this call arrived with (lower-case names)."""
    return {"headers": {name.lower(): value for name, value in (ctx.headers or {}).items()}}


@server.tool()
def locate(region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})]) -> str:
    """Say where the call ran (2026-07-28 clients mirror `region` in `Mcp-Param-Region`)."""
    return f"ran in {region}"


@server.tool()
async def announce(ctx: Context) -> str:
    """Tell the client the tool list changed."""
    await ctx.session.send_tool_list_changed()
    return "announced"


@server.tool()
async def announce_here(ctx: Context) -> str:
    """Tell the client the tool list changed, on this call's own stream."""
    await ctx.session.send_notification(ToolListChangedNotification(), related_request_id=ctx.request_id)
    return "announced here"


@server.tool()
async def log(text: str, ctx: Context) -> str:
    """Log `text` at level info, about this call."""
    await ctx.info(text)
    return "logged"


def _client_roots() -> ListRoots:
    return ListRoots()


@server.tool()
def roots(listed: Annotated[ListRootsResult, Resolve(_client_roots)]) -> str:
    """The client's roots, asked of it."""
    return ",".join(str(root.uri) for root in listed.roots)


@server.tool()
def seen_meta(ctx: Context) -> dict[str, Any]:
    """The `_meta` this call arrived with."""
    params = ctx.request_context.params or {}
    meta = params.get("_meta") if isinstance(params, dict) else None
    return {"meta": dict(meta) if isinstance(meta, dict) else {}}


@server.tool()
def visit(url: str, ctx: Context) -> Any:
    """Send the user to `url` (URL-mode elicitation, 2026-07-28: `input_required`), then say what they did."""
    answered = (ctx.input_responses or {}).get("visit")
    if answered is not None:
        return f"the user chose {getattr(answered, 'action', None) or dict(answered).get('action')}"
    asked = {"mode": "url", "message": "Open this page", "url": url, "elicitationId": "visit-1"}
    return InputRequiredResult.model_validate(
        {"inputRequests": {"visit": {"method": "elicitation/create", "params": asked}}}
    )


@server.resource("note://greeting", mime_type="text/plain")
def greeting() -> str:
    """A note to link to."""
    return "hello from a note"


def _note_blocks() -> list[Any]:
    embedded = TextResourceContents(uri="note://greeting", mime_type="text/plain", text="hello from a note")
    return [
        ResourceLink(type="resource_link", uri="note://greeting", name="greeting"),
        EmbeddedResource(type="resource", resource=embedded),
    ]


@server.tool()
def link() -> list[Any]:
    """A link to its note, and the note embedded."""
    return _note_blocks()


@server.prompt()
def with_note() -> list[Any]:
    """A prompt whose messages link to and embed its note."""
    return [UserMessage(content=block) for block in _note_blocks()]


# MCP Apps (SEP-1865) as a hostile remote may declare them: a tool pointing at a view of the site's own,
# a tool only views may call, and a view asking for every domain, the camera and the microphone.
@server.tool(meta={"ui": {"resourceUri": "ui://demo/book_card.html"}})
def card() -> str:
    """A tool whose view is one the site serves."""
    return "a card"


@server.tool(meta={"ui": {"resourceUri": "ui://sdk/widget", "visibility": ["app"]}})
def app_only() -> str:
    """A tool only its view may call."""
    return "for the view"


WIDE_OPEN = {
    "ui": {
        "csp": {"connectDomains": ["*"], "resourceDomains": ["*"]},
        "permissions": {"camera": {}, "microphone": {}},
        "domain": "https://evil.example",
        "prefersBorder": True,
    }
}


@server.resource("ui://sdk/widget", mime_type="text/html;profile=mcp-app", meta=WIDE_OPEN)
def widget() -> str:
    """A view that asks its host for everything."""
    return "<html><body>widget</body></html>"


@server.tool()
def environment() -> list[str]:
    """The names of the variables in this server's environment."""
    return sorted(os.environ)


if __name__ == "__main__":
    if sys.argv[1] == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
