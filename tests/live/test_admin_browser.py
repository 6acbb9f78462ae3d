"""A real browser in the admin: Debian's chromium, driven by Playwright, switches a provider off and on, and the
official `mcp` client sees its tools vanish and come back. Screenshots land in `test-artifacts/`.

Chromium comes from Debian (`make test` installs the package when `/usr/bin/chromium` is missing); Playwright's
own browser downloads are never used. Without chromium the test is skipped, saying so.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import LiveServer, serve_example
from tests.live.admin_support import private_env
from tests.live.test_official_client import client

pytestmark = pytest.mark.live

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
BOOK_TOOL = "about_dune"


def chromium_path() -> str | None:
    """Debian's chromium: `MCP_TEST_CHROMIUM`, else /usr/bin/chromium, else `chromium` on the PATH."""
    for candidate in (os.environ.get("MCP_TEST_CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


@pytest.fixture(scope="module")
def admin_server(live_server_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    directory = tmp_path_factory.mktemp("browser")
    with serve_example(private_env(live_server_env, directory), directory) as server:
        yield server


@contextlib.contextmanager
def chromium(profile: Path, *args: str) -> Iterator[Any]:
    """Headless Debian chromium driven by Playwright (a browser context); skips the test without either."""
    executable = chromium_path()
    if executable is None:
        pytest.skip("chromium not found: install Debian's chromium (make test does) or set MCP_TEST_CHROMIUM")
    sync_api = pytest.importorskip("playwright.sync_api", reason="the test extras install playwright")
    with sync_api.sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile),
            executable_path=executable,
            headless=True,
            args=[*CHROMIUM_ARGS, *args],
            viewport={"width": 1280, "height": 900},
        )
        try:
            yield context
        finally:
            context.close()


@pytest.fixture
def page(tmp_path: Path) -> Iterator[Any]:
    with chromium(tmp_path / "chromium-profile") as context:
        yield context.pages[0] if context.pages else context.new_page()


def adapter_tools(server: LiveServer) -> set[str]:
    """The adapter tools carol sees through the official client (run in a thread: Playwright owns this one)."""

    async def listed() -> set[str]:
        async with client(server, "auto", "/mcp/adapter", user="carol") as session:
            return {tool.name for tool in (await session.list_tools()).tools}

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, listed()).result(timeout=30)


def wait_for_tools(server: LiveServer, visible: bool, seconds: float = 2.0) -> set[str]:
    deadline = time.monotonic() + seconds
    while True:
        tools = adapter_tools(server)
        if (BOOK_TOOL in tools) == visible or time.monotonic() > deadline:
            return tools


def switch_books(page: Any, action: str) -> None:
    page.locator("tr", has_text="demo.books").locator("input.action-select").check()
    page.select_option("select[name=action]", action)
    page.click("button[name=index]")
    page.wait_for_selector("ul.messagelist")


def test_a_superuser_switches_a_provider_off_and_on_in_the_browser_and_the_client_follows(
    admin_server: LiveServer, page: Any
) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    before = adapter_tools(admin_server)

    page.goto(admin_server.url("/admin/login/?next=/admin/"))
    page.fill("#id_username", "admin")
    page.fill("#id_password", "admin")
    page.click("input[type=submit]")
    page.wait_for_selector("#content-main")
    page.click("a[href='/admin/mcp_django/controlroom/']")
    page.wait_for_selector("#mcp-dashboard svg")
    page.screenshot(path=str(ARTIFACTS / "admin-dashboard.png"), full_page=True)
    views = page.locator("#mcp-apps tbody tr", has_text="show_book").first.inner_text()

    page.goto(admin_server.url("/admin/mcp_django/providerstate/"))
    switch_books(page, "disable_selected")
    page.screenshot(path=str(ARTIFACTS / "admin-providers-disabled.png"), full_page=True)
    while_off = wait_for_tools(admin_server, visible=False)

    switch_books(page, "enable_selected")
    page.screenshot(path=str(ARTIFACTS / "admin-providers-enabled.png"), full_page=True)
    after = wait_for_tools(admin_server, visible=True)

    page.goto(admin_server.url("/admin/mcp_django/interceptorstate/"))
    page.screenshot(path=str(ARTIFACTS / "admin-interceptors.png"), full_page=True)
    page.goto(admin_server.url("/admin/mcp_django/controlroom/"))
    page.screenshot(path=str(ARTIFACTS / "admin-dashboard-after.png"), full_page=True)

    assert "ui://apps/demo/book_card.html" in views
    assert views.split()[-1] == "served"
    assert "not served" not in views
    assert BOOK_TOOL in before
    assert BOOK_TOOL not in while_off
    assert "count_demo_book" in while_off
    assert after == before
