"""Helpers of the control-room live tests: a private copy of the demo database, MCP and the admin over HTTP."""

from __future__ import annotations

import http.cookiejar
import json
import re
import shutil
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from tests.conftest import LiveServer
from tests.http_support import ACCEPT, initialize, request, stateless, stateless_headers

PROVIDERS = "/admin/mcp_django/providerstate/"
SESSIONS = "/admin/mcp_django/mcpsession/"


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

    def run_action(self, changelist: str, link_text: str, action: str) -> None:
        """Tick the row whose link reads `link_text` in a change list and run `action` on it."""
        page = self.get(changelist)
        row = re.search(rf'href="{changelist}(\d+)/change/[^"]*">{re.escape(link_text)}<', page)
        assert row is not None, f"{link_text!r} is not in {changelist}"
        self.post(changelist, {"action": action, "_selected_action": [row.group(1)]})

    def switch_provider(self, provider_id: str, enabled: bool) -> None:
        """Run the provider change list's enable or disable action on one provider."""
        self.run_action(PROVIDERS, provider_id, "enable_selected" if enabled else "disable_selected")

    def revoke_session(self, session_id: str) -> None:
        """Run the session change list's revoke action on one session."""
        self.run_action(SESSIONS, f"{session_id[:12]}…", "revoke_sessions")


def open_session(server: LiveServer, user: str = "carol", path: str = "/mcp/adapter") -> dict[str, str]:
    """Open a handshake session for `user`; the headers its later requests send."""
    headers = {"Content-Type": "application/json", "Accept": ACCEPT, "Authorization": f"Bearer {server.tokens[user]}"}
    body = json.dumps(initialize()).encode()
    with urllib.request.urlopen(urllib.request.Request(server.url(path), body, headers), timeout=10) as response:
        session = {
            **headers,
            "Mcp-Session-Id": response.headers["Mcp-Session-Id"],
            "MCP-Protocol-Version": "2025-11-25",
        }
    initialized = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()
    urllib.request.urlopen(urllib.request.Request(server.url(path), initialized, session), timeout=10).close()
    return session


def ping_status(server: LiveServer, session: dict[str, str], path: str = "/mcp/adapter") -> int:
    """The HTTP status of a `ping` in the session."""
    body = json.dumps(request("ping", id=2)).encode()
    try:
        with urllib.request.urlopen(urllib.request.Request(server.url(path), body, session), timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code)
