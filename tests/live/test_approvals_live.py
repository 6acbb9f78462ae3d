"""Approvals over real sockets: the example project under daphne, a real task worker (`manage.py db_worker`), the
official `mcp` client in 2026-07-28, and Debian's chromium in the admin.

bob adds two books by an author of the test's own and calls the demo's `retire_author` (approval by a holder of
demo.delete_book). The call answers a task awaiting approval, showing the cascade; nothing is deleted. A librarian
approves it in the browser and the worker deletes the books, once. A clerk who may see the approvals but not decide
them gets no buttons, and a POST of the decision straight to the server is refused (403). Denied and expired
approvals fail their task; a call whose stored arguments were rewritten after it was shown is not run; the
handshake era is refused with the link to the approvals.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.cookiejar
import re
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import pytest
from mcp import Client
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, Result
from pydantic import ConfigDict

from mcp_django.tasks.approvals import META
from mcp_django.tasks.methods import EXTENSION
from tests.conftest import ROOT, LiveServer, serve_example, task_workers
from tests.live.admin_support import private_env
from tests.live.test_admin_browser import ARTIFACTS, chromium
from tests.live.words import unique_word
from tests.tasks.test_worker_process import call

pytestmark = pytest.mark.live

WAIT_S = 60.0
DATABASES: dict[str, str] = {}
"""Each module server's database, by its base URL."""
APPROVALS = "/admin/mcp_django_tasks/mcpapproval/"
STAFF = """
from django.contrib.auth.models import Permission, User
for name, extra in (("librarian", ["delete_book"]), ("clerk", [])):
    user = User.objects.create_user(name, password="pw-" + name, is_staff=True)
    user.user_permissions.add(*Permission.objects.filter(codename__in=["view_mcpapproval", *extra]))
"""


class TaskCreated(Result):
    """SEP-2663's `CreateTaskResult`, as far as the test reads it."""

    model_config = ConfigDict(extra="allow")
    result_type: Literal["task"]
    task_id: str
    status: str
    status_message: str | None = None


async def _unresolved(result: TaskCreated, ctx: ClaimContext) -> CallToolResult:
    raise AssertionError("the test reads the task itself (allow_claimed=True)")


class Tasks(ClientExtension):
    """Declares the tasks extension and claims its `task` result."""

    identifier = EXTENSION

    def claims(self) -> list[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=TaskCreated, resolve=_unresolved)]


@pytest.fixture(scope="module")
def server(live_server_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    directory = tmp_path_factory.mktemp("approvals")
    env = private_env(live_server_env, directory)
    subprocess.run([sys.executable, "manage.py", "shell", "-c", STAFF], cwd=ROOT, env=env, check=True)
    with task_workers(env, directory, count=1), serve_example(env, directory) as live:
        DATABASES[live.base_url] = env["MCP_EXAMPLE_DB"]
        yield live


def sql(server: LiveServer, statement: str, *params: Any) -> list[tuple[Any, ...]]:
    with contextlib.closing(sqlite3.connect(DATABASES[server.base_url], timeout=10)) as db, db:
        return db.execute(statement, params).fetchall()


def books_by(server: LiveServer, author: str) -> int:
    return int(sql(server, "SELECT COUNT(*) FROM demo_book WHERE author = ?", author)[0][0])


def shelve(server: LiveServer) -> str:
    """Two books by a new author, added by bob; the author's name."""
    author = f"Author {unique_word(10)}"
    books = [{"title": f"{author} {n}", "author": author, "year": 2000 + n} for n in (1, 2)]
    added = call(
        server,
        "tools/call",
        {"name": "import_books", "arguments": {"books": books}},
        name="import_books",
        token=server.tokens["bob"],
    )
    assert not added["result"].get("isError"), added
    return author


async def retire(server: LiveServer, author: str) -> TaskCreated:
    """bob calls `retire_author` through the official client in 2026-07-28, declaring the tasks extension."""
    headers = {"Authorization": f"Bearer {server.tokens['bob']}"}
    async with create_mcp_http_client(headers=headers) as http:
        transport = streamable_http_client(server.url("/mcp"), http_client=http)
        async with Client(transport, mode="2026-07-28", read_timeout_seconds=30, extensions=[Tasks()]) as session:
            created = await session.session.call_tool("retire_author", {"author": author}, allow_claimed=True)
    assert isinstance(created, TaskCreated), created
    return created


def task_of(server: LiveServer, task_id: str) -> dict[str, Any]:
    return dict(call(server, "tasks/get", {"taskId": task_id}, name=task_id, token=server.tokens["bob"])["result"])


def settled(server: LiveServer, task_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + WAIT_S
    while (task := task_of(server, task_id))["status"] == "working" and time.monotonic() < deadline:
        time.sleep(0.2)  # the worker runs it in another process: poll, bounded by the deadline
    return task


def approval_id(server: LiveServer, task_id: str) -> int:
    return int(sql(server, "SELECT id FROM mcp_django_tasks_mcpapproval WHERE task_id_text = ?", task_id)[0][0])


class StaffUser:
    """A staff user logged in to the admin over plain HTTP (cookies and CSRF as a browser sends them)."""

    def __init__(self, server: LiveServer, name: str) -> None:
        self.server = server
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        login = "/admin/login/?next=/admin/"
        self.post(login, login, {"username": name, "password": f"pw-{name}"})

    def get(self, path: str) -> str:
        with self.opener.open(self.server.url(path), timeout=10) as response:
            return str(response.read().decode())

    def post(self, page: str, target: str, fields: dict[str, str]) -> int:
        """POST `fields` to `target` with the CSRF token of `page`, as a form on `page` would; the status."""
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', self.get(page))
        assert token is not None, page
        data = urllib.parse.urlencode({**fields, "csrfmiddlewaretoken": token.group(1)}).encode()
        request = urllib.request.Request(self.server.url(target), data, {"Referer": self.server.url(page)})
        try:
            with self.opener.open(request, timeout=10) as response:
                return int(response.status)
        except urllib.error.HTTPError as error:
            return int(error.code)


async def test_a_gated_call_answers_a_task_awaiting_approval_and_deletes_nothing(server: LiveServer) -> None:
    author = shelve(server)

    created = await retire(server, author)

    assert created.status == "working"
    assert (created.status_message or "").startswith("Awaiting approval by a holder of demo.delete_book: http://")
    shown = (created.meta or {})[META]
    assert shown["state"] == "pending"
    assert shown["approvalUrl"] == server.url(f"{APPROVALS}?state__exact=pending")
    assert shown["preview"]["deletes"] == {"demo.Book": 2}
    assert task_of(server, created.task_id)["status"] == "working"
    assert books_by(server, author) == 2


async def test_the_handshake_era_is_refused_with_the_link_to_the_approvals(server: LiveServer) -> None:
    author = shelve(server)
    headers = {"Authorization": f"Bearer {server.tokens['bob']}"}
    async with create_mcp_http_client(headers=headers) as http:
        transport = streamable_http_client(server.url("/mcp"), http_client=http)
        async with Client(transport, mode="legacy", read_timeout_seconds=30) as session:
            with pytest.raises(MCPError) as refused:
                await session.call_tool("retire_author", {"author": author})
    assert f"approves it ({server.url(APPROVALS)}?state__exact=pending)" in str(refused.value)
    assert books_by(server, author) == 2


def test_a_librarian_approves_in_the_browser_and_the_call_runs_once(server: LiveServer, tmp_path: Path) -> None:
    author = shelve(server)
    created = asyncio.run(retire(server, author))  # Playwright's sync API wants no running loop in this thread
    page_of_it = f"{APPROVALS}{approval_id(server, created.task_id)}/change/"

    clerk = StaffUser(server, "clerk")
    assert "Approve and run once" not in clerk.get(page_of_it)
    digest = sql(server, "SELECT digest FROM mcp_django_tasks_mcpapproval WHERE task_id_text = ?", created.task_id)
    decide = f"{APPROVALS}{approval_id(server, created.task_id)}/decide/"
    refused = clerk.post(page_of_it, decide, {"decision": "approve", "digest": digest[0][0]})
    assert refused == 403  # the server refuses, not only the page
    assert task_of(server, created.task_id)["status"] == "working"

    with chromium(tmp_path / "chromium-profile") as context:
        page = context.pages[0] if context.pages else context.new_page()
        page.goto(server.url("/admin/login/?next=/admin/"))
        page.fill("#id_username", "librarian")
        page.fill("#id_password", "pw-librarian")
        page.click("input[type=submit]")
        page.wait_for_selector("#content-main")
        page.goto(server.url(f"{APPROVALS}?state__exact=pending"))
        page.click(f"a[href*='/mcpapproval/{approval_id(server, created.task_id)}/change/']")
        page.wait_for_selector("#approval-decision")
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "admin-approval.png"), full_page=True)
        assert '"demo.Book": 2' in page.inner_text("#content-main")
        page.click("button[value=approve]")
        page.wait_for_selector("ul.messagelist")

    done = settled(server, created.task_id)
    assert done["status"] == "completed", done
    assert done["result"]["content"][0]["text"] == f"Removed 2 book(s) by {author}."
    assert books_by(server, author) == 0
    steps = sql(
        server, "SELECT state, history FROM mcp_django_tasks_mcpapproval WHERE task_id_text = ?", created.task_id
    )[0]
    assert steps[0] == "ran"
    assert [step for step in re.findall(r'"step": "(\w+)"', steps[1])] == ["requested", "approved", "ran", "finished"]


async def test_a_denied_and_an_expired_approval_fail_their_tasks_and_nothing_is_deleted(server: LiveServer) -> None:
    denied_author, expired_author = shelve(server), shelve(server)
    denied = await retire(server, denied_author)
    expired = await retire(server, expired_author)
    librarian = StaffUser(server, "librarian")
    page = f"{APPROVALS}{approval_id(server, denied.task_id)}/change/"
    decide = f"{APPROVALS}{approval_id(server, denied.task_id)}/decide/"
    assert librarian.post(page, decide, {"decision": "deny", "reason": "Keep them"}) in (200, 302)
    sql(
        server,
        "UPDATE mcp_django_tasks_mcpapproval SET expires_at = '2000-01-01 00:00:00' WHERE task_id_text = ?",
        expired.task_id,
    )

    denial = task_of(server, denied.task_id)
    expiry = task_of(server, expired.task_id)

    assert denial["status"] == "failed"
    assert denial["error"]["message"] == "The call of retire_author was denied by librarian: Keep them"
    assert denial["error"]["data"]["reason"] == "approval_denied"
    assert denial["error"]["data"]["authorization"]["reason"] == "insufficient_authorization"
    assert expiry["status"] == "failed"
    assert expiry["error"]["data"]["reason"] == "approval_expired"
    assert books_by(server, denied_author) == 2
    assert books_by(server, expired_author) == 2


async def test_a_call_whose_stored_arguments_changed_after_it_was_shown_is_not_run(server: LiveServer) -> None:
    shown_author, other_author = shelve(server), shelve(server)
    created = await retire(server, shown_author)
    tampered = '{"author": "' + other_author + '"}'
    sql(server, "UPDATE mcp_django_mcptask SET arguments = ? WHERE task_id = ?", tampered, created.task_id)
    librarian = StaffUser(server, "librarian")
    page = f"{APPROVALS}{approval_id(server, created.task_id)}/change/"
    digest = sql(server, "SELECT digest FROM mcp_django_tasks_mcpapproval WHERE task_id_text = ?", created.task_id)
    decide = f"{APPROVALS}{approval_id(server, created.task_id)}/decide/"
    assert librarian.post(page, decide, {"decision": "approve", "digest": digest[0][0]}) in (200, 302)

    refused = settled(server, created.task_id)

    assert refused["status"] == "failed", refused
    assert refused["error"]["data"]["reason"] == "approval_arguments_changed"
    assert books_by(server, other_author) == 2
    assert books_by(server, shown_author) == 2
