"""Helpers of the control-room live tests: a private copy of the demo database, MCP and the admin over HTTP."""

from __future__ import annotations

import http.cookiejar
import json
import re
import shutil
import urllib.parse
import urllib.request
from pathlib import Path

from tests.conftest import LiveServer
from tests.http_support import ACCEPT, stateless, stateless_headers

PROVIDERS = "/admin/mcp_django/providerstate/"


def private_env(live_server_env: dict[str, str], directory: Path) -> dict[str, str]:
    """A copy of the live servers' migrated, seeded database, so switching providers off disturbs no other test."""
    database = directory / "db.sqlite3"
    shutil.copyfile(live_server_env["MCP_EXAMPLE_DB"], database)
    return {**live_server_env, "MCP_EXAMPLE_DB": str(database)}


def tool_names(server: LiveServer, user: str = "carol", path: str = "/mcp/adapter") -> set[str]:
    """The tools a stateless `tools/list` shows `user` on `path`."""
    body = json.dumps(stateless("tools/list")).encode()
    headers = {
        "Content-Type": "application/json",
        "Accept": ACCEPT,
        "Authorization": f"Bearer {server.tokens[user]}",
        **stateless_headers("tools/list"),
    }
    with urllib.request.urlopen(urllib.request.Request(server.url(path), body, headers), timeout=10) as response:
        return {tool["name"] for tool in json.loads(response.read())["result"]["tools"]}


class AdminUser:
    """The demo superuser, logged in to one server's admin over plain HTTP (cookies and CSRF like a browser)."""

    def __init__(self, server: LiveServer, username: str = "admin", password: str = "admin") -> None:
        self.server = server
        self.cookies = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.cookies))
        self.post("/admin/login/?next=/admin/", {"username": username, "password": password})

    def get(self, path: str) -> str:
        with self.opener.open(self.server.url(path), timeout=10) as response:
            return str(response.read().decode())

    def post(self, path: str, fields: dict[str, str | list[str]]) -> str:
        page = self.get(path)
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
        assert token is not None, "no CSRF token on " + path
        data = urllib.parse.urlencode({**fields, "csrfmiddlewaretoken": token.group(1)}, doseq=True).encode()
        request = urllib.request.Request(self.server.url(path), data, {"Referer": self.server.url(path)})
        with self.opener.open(request, timeout=10) as response:
            return str(response.read().decode())

    def switch_provider(self, provider_id: str, enabled: bool) -> None:
        """Run the change list's enable or disable action on one provider."""
        page = self.get(PROVIDERS)
        row = re.search(rf'href="{PROVIDERS}(\d+)/change/[^"]*">{re.escape(provider_id)}<', page)
        assert row is not None, f"{provider_id} is not in the provider change list"
        action = "enable_selected" if enabled else "disable_selected"
        self.post(PROVIDERS, {"action": action, "_selected_action": [row.group(1)]})
