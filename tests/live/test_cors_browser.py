"""A browser-based MCP client: a page served on another origin calls the example project from headless chromium.

The page comes from `http://client.test:<port>/` (a small HTTP server of the test; chromium resolves the name to
loopback), which `MCP_DJANGO["ALLOWED_ORIGINS"]` admits; `http://evil.test:<port>/` serves the same page and is
not admitted. The MCP calls carry `Authorization` and MCP's headers, so every one is preceded by a CORS preflight.
Chromium comes from Debian, as in `test_admin_browser`; without it the test is skipped, saying so.
"""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import LiveServer, _free_port, serve_example
from tests.live.admin_support import private_env
from tests.live.test_admin_browser import chromium

pytestmark = pytest.mark.live

RESOLVE_TEST_NAMES = "--host-resolver-rules=MAP client.test 127.0.0.1, MAP evil.test 127.0.0.1"
PAGE = b"<!doctype html><title>an MCP client in a page</title><p>client</p>"

CALL_THE_SERVER = """
async ({url, token}) => {
  const headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"};
  if (token) headers["Authorization"] = "Bearer " + token;
  const post = (message, extra) =>
    fetch(url, {method: "POST", headers: {...headers, ...extra}, body: JSON.stringify(message)});
  try {
    const init = await post({jsonrpc: "2.0", id: 1, method: "initialize", params: {
      protocolVersion: "2025-11-25", capabilities: {}, clientInfo: {name: "browser", version: "1.0"}}});
    if (init.status !== 200) {
      return {status: init.status, challenge: init.headers.get("WWW-Authenticate")};
    }
    const session = init.headers.get("Mcp-Session-Id");
    const sessionHeaders = {"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"};
    await post({jsonrpc: "2.0", method: "notifications/initialized"}, sessionHeaders);
    const call = await post({jsonrpc: "2.0", id: 2, method: "tools/call",
      params: {name: "search_books", arguments: {query: "Dune"}}}, sessionHeaders);
    return {status: call.status, session, result: (await call.json()).result};
  } catch (error) {
    return {error: String(error)};
  }
}
"""


class _PageHandler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(PAGE)))
        self.end_headers()
        self.wfile.write(PAGE)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def page_port() -> Iterator[int]:
    """The port of the server of the client page (on loopback; chromium reaches it as client.test or evil.test)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", _free_port()), _PageHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@pytest.fixture(scope="module")
def cors_server(
    live_server_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory, page_port: int
) -> Iterator[LiveServer]:
    directory = tmp_path_factory.mktemp("cors")
    env = {**private_env(live_server_env, directory), "MCP_EXAMPLE_ALLOWED_ORIGINS": f"http://client.test:{page_port}"}
    with serve_example(env, directory) as server:
        yield server


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Any]:
    with chromium(tmp_path / "chromium-profile", RESOLVE_TEST_NAMES) as context:
        yield context


def call_from(browser: Any, origin: str, server: LiveServer, token: str | None) -> dict[str, Any]:
    page = browser.new_page()
    try:
        page.goto(origin + "/")
        result: dict[str, Any] = page.evaluate(CALL_THE_SERVER, {"url": server.url("/mcp"), "token": token})
        return result
    finally:
        page.close()


def test_a_page_on_an_allowed_origin_calls_a_tool_and_reads_its_session_id(
    cors_server: LiveServer, browser: Any, page_port: int
) -> None:
    answer = call_from(browser, f"http://client.test:{page_port}", cors_server, cors_server.tokens["carol"])

    assert answer.get("status") == 200, answer
    assert answer["session"]  # exposed to the page's code
    assert "Dune" in answer["result"]["content"][0]["text"]


def test_a_page_on_an_allowed_origin_reads_the_401_challenge(
    cors_server: LiveServer, browser: Any, page_port: int
) -> None:
    answer = call_from(browser, f"http://client.test:{page_port}", cors_server, None)

    assert answer.get("status") == 401, answer
    assert "resource_metadata=" in answer["challenge"]


def test_a_page_on_another_origin_cannot_call(cors_server: LiveServer, browser: Any, page_port: int) -> None:
    answer = call_from(browser, f"http://evil.test:{page_port}", cors_server, cors_server.tokens["carol"])

    assert answer == {"error": "TypeError: Failed to fetch"}
