"""An MCP Apps host in a real browser: the demo's book card, read from the example project through the official
`mcp` client, runs in a sandboxed iframe of a small host page written to the 2026-01-26 text (SEP-1865).

The host page answers `ui/initialize`, sends `ui/notifications/tool-input` and `-tool-result` once the view says
`ui/notifications/initialized`, and forwards the view's `tools/call` (its `_meta` too, where the bridge marks the
call as the view's) to the server through the official client.
The iframe has `sandbox="allow-scripts"` (an opaque origin) and the CSP the spec has hosts build from the
resource's `_meta.ui.csp`. Screenshots land in `.cache/screenshots/`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp.client.extension import ClientExtension

from mcp_django.ui import APP_MIME_TYPE, EXTENSION
from tests.conftest import LiveServer
from tests.live.database_support import server_database
from tests.live.test_admin_browser import chromium
from tests.live.test_official_client import client

pytestmark = pytest.mark.live

SCREENSHOTS = Path(__file__).resolve().parents[2] / ".cache" / "screenshots"
WAIT_MS = 15_000

HOST_PAGE = """<!doctype html><html><head><title>a minimal MCP Apps host</title>
<style>body{font-family:sans-serif;background:#eef} iframe{border:1px solid #99a;background:#fff;width:480px}</style>
</head><body><h1>host</h1><iframe id="view" sandbox="allow-scripts"></iframe></body></html>"""

HOST_SCRIPT = """
({html, csp, toolInput, toolResult}) => {
  window.hostLog = [];
  const frame = document.getElementById("view");
  const send = (message) => frame.contentWindow.postMessage({jsonrpc: "2.0", ...message}, "*");
  window.addEventListener("message", async (event) => {
    if (event.source !== frame.contentWindow) return;
    const message = event.data;
    window.hostLog.push(message);
    if (message.method === "ui/initialize") {
      send({id: message.id, result: {
        protocolVersion: "2026-01-26",
        hostInfo: {name: "test-host", version: "1"},
        hostCapabilities: {serverTools: {}, serverResources: {}, logging: {}},
        hostContext: {theme: "light", displayMode: "inline", locale: "en-US"}}});
    } else if (message.method === "ui/notifications/initialized") {
      send({method: "ui/notifications/tool-input", params: {arguments: toolInput}});
      send({method: "ui/notifications/tool-result", params: toolResult});
    } else if (message.method === "tools/call") {
      const params = message.params;
      const result = await window.forwardToolCall(params.name, params.arguments, params._meta || null);
      send({id: message.id, result});
    } else if (message.method === "ui/notifications/size-changed") {
      frame.style.height = message.params.height + "px";  // flexible height: the view's own
    } else if (message.id !== undefined && message.method !== undefined) {
      send({id: message.id, error: {code: -32601, message: "not in this host"}});
    }
  });
  // The CSP the 2026-01-26 text has hosts build from _meta.ui.csp, in the document the view is loaded as.
  const domains = (key) => ((csp || {})[key] || []).join(" ");
  const policy = [
    "default-src 'none'",
    `script-src 'self' 'unsafe-inline' ${domains("resourceDomains")}`,
    `style-src 'self' 'unsafe-inline' ${domains("resourceDomains")}`,
    `connect-src 'self' ${domains("connectDomains")}`,
    `img-src 'self' data: ${domains("resourceDomains")}`,
    `frame-src ${domains("frameDomains") || "'none'"}`,
    "object-src 'none'",
  ].join("; ");
  const meta = `<meta http-equiv="Content-Security-Policy" content="${policy}">`;
  frame.srcdoc = html.replace(/<head>/i, "<head>" + meta);
}
"""


class AppsHost(ClientExtension):
    """What a host of MCP Apps declares: the extension, with the app MIME type."""

    identifier = EXTENSION

    def settings(self) -> dict[str, Any]:
        return {"mimeTypes": [APP_MIME_TYPE]}


def in_thread(coroutine: Any) -> Any:
    """Run the official client's coroutine on a loop of its own (Playwright's sync API owns this thread's)."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result(timeout=60)


async def the_card(server: LiveServer, mode: str) -> dict[str, Any]:
    """What a host gets for `show_book` of Dune: the tool, its view's contents and the call's result."""
    async with client(server, mode, extensions=[AppsHost()]) as session:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        uri = (tools["show_book"].meta or {})["ui"]["resourceUri"]
        (content,) = (await session.read_resource(uri)).contents
        found = await session.call_tool("search_books", {"query": "Dune"})
        book_id = int(re.match(r"#(\d+) ", found.content[0].text).group(1))  # type: ignore[union-attr]
        arguments = {"book_id": book_id}
        result = await session.call_tool("show_book", arguments)
    return {
        "tool": tools["show_book"].model_dump(by_alias=True, exclude_none=True),
        "content": content.model_dump(by_alias=True, exclude_none=True),
        "arguments": arguments,
        "result": result.model_dump(by_alias=True, exclude_none=True, mode="json"),
    }


async def forwarded(
    server: LiveServer, mode: str, name: str, arguments: dict[str, Any], meta: dict[str, Any] | None
) -> dict[str, Any]:
    async with client(server, mode, extensions=[AppsHost()]) as session:
        result = await session.call_tool(name, arguments, meta=meta)  # type: ignore[arg-type]  # our own key
    return result.model_dump(by_alias=True, exclude_none=True, mode="json")


@pytest.fixture
def page(tmp_path: Path) -> Iterator[Any]:
    with chromium(tmp_path / "chromium-profile") as context:
        yield context.pages[0] if context.pages else context.new_page()


def host(page: Any, server: LiveServer, mode: str, card: dict[str, Any], result: dict[str, Any]) -> Any:
    """Load the card into the host page with `result` as the tool's result; the view's frame."""
    page.expose_function(
        "forwardToolCall", lambda name, args, meta: in_thread(forwarded(server, mode, name, args, meta))
    )
    page.set_content(HOST_PAGE)
    page.evaluate(
        HOST_SCRIPT,
        {
            "html": card["content"]["text"],
            "csp": card["content"].get("_meta", {}).get("ui", {}).get("csp"),
            "toolInput": card["arguments"],
            "toolResult": result,
        },
    )
    return page.frame_locator("#view")


def calls_from_views(env: dict[str, str], tool: str) -> int:
    """How many calls of `tool` the live server's audit trail records as made by an app's view."""
    with server_database(env) as database:
        query = "SELECT COUNT(*) FROM mcp_django_toolcallrecord WHERE tool = ? AND origin = 'app'"
        return int(database.rows(query, [tool])[0][0])


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_a_host_renders_the_book_card_and_the_card_calls_a_second_tool_through_it(
    example_server: LiveServer, live_server_env: dict[str, str], page: Any, mode: str
) -> None:
    card = in_thread(the_card(example_server, mode))
    before = calls_from_views(live_server_env, "search_books")
    assert card["content"]["mimeType"] == APP_MIME_TYPE
    assert card["content"]["_meta"] == {"ui": {"prefersBorder": True}}

    view = host(page, example_server, mode, card, card["result"])
    view.locator("#title").filter(has_text="Dune").wait_for(timeout=WAIT_MS)
    view.locator("#more").click()
    view.locator("#others[data-loaded=true]").wait_for(timeout=WAIT_MS)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"apps-book-card-{mode}.png"))

    assert view.locator("#byline").text_content() == "Frank Herbert · 1965"
    assert "Dune" in (view.locator("#others li").first.text_content() or "")
    assert "Shown to carol" in (view.locator("footer").text_content() or "")
    methods = [message.get("method") for message in page.evaluate("window.hostLog")]
    assert methods[:2] == ["ui/initialize", "ui/notifications/initialized"]
    assert "ui/notifications/size-changed" in methods
    (call,) = [message for message in page.evaluate("window.hostLog") if message.get("method") == "tools/call"]
    assert call["params"]["_meta"] == {"mcp_django/origin": "app"}
    # The view's call is in the audit trail as the app's (the_card's own search_books call is the agent's).
    assert calls_from_views(live_server_env, "search_books") == before + 1


def test_a_tool_result_carrying_markup_is_shown_as_text_and_runs_nothing(example_server: LiveServer, page: Any) -> None:
    card = in_thread(the_card(example_server, "2026-07-28"))
    attack = "<img src=x onerror=\"parent.postMessage({jsonrpc:'2.0',method:'pwned'},'*')\">"
    structured = {**card["result"]["structuredContent"], "title": attack}
    result = {
        **card["result"],
        "structuredContent": structured,
        "content": [{"type": "text", "text": json.dumps(structured)}],
    }

    view = host(page, example_server, "2026-07-28", card, result)
    view.locator("#more:not([hidden])").wait_for(timeout=WAIT_MS)
    page.wait_for_timeout(300)  # an injected handler would have fired by now

    assert view.locator("#title").text_content() == attack
    assert view.locator("#title img").count() == 0
    assert "pwned" not in [message.get("method") for message in page.evaluate("window.hostLog")]
