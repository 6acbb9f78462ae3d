"""Tasks across real processes: daphne accepts the call, `manage.py db_worker` runs it, any daphne reports it.

The web process that accepted a task is killed before any worker runs; a worker started afterwards
finishes the task, and a new web process reports its result. The demo users' tokens show the binding:
another user asking for the task is told it does not exist.
"""

from __future__ import annotations

import json
import sqlite3
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from mcp_django.tasks.methods import EXTENSION
from tests.conftest import LiveServer, serve_example, task_workers
from tests.http_support import ACCEPT, CLIENT_INFO, STATELESS_VERSION

pytestmark = pytest.mark.live

WAIT_S = 60.0


def call(server: LiveServer, method: str, params: dict[str, Any], *, name: str | None = None, token: str = "") -> Any:
    """One 2026-07-28 request to the conformance fixture (anonymous) or the demo endpoint (with `token`)."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": STATELESS_VERSION,
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {EXTENSION: {}}},
        "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": meta}}
    headers = {"Content-Type": "application/json", "Accept": ACCEPT, "MCP-Protocol-Version": STATELESS_VERSION}
    headers["Mcp-Method"] = method
    if name is not None:
        headers["Mcp-Name"] = name
    if token:
        headers["Authorization"] = f"Token {token}"
    path = "/mcp" if token else "/conformance/mcp"
    request = urllib.request.Request(server.url(path), json.dumps(body).encode(), headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as error:  # a JSON-RPC error answered with its HTTP status
        return json.loads(error.read())


def status_in_database(database: str, task_id: str) -> str:
    with sqlite3.connect(database) as connection:
        row = connection.execute("SELECT status FROM mcp_django_mcptask WHERE task_id = ?", (task_id,)).fetchone()
    return str(row[0])


def test_a_task_outlives_the_web_process_and_the_worker_finishes_it(
    live_server_env: dict[str, str], tmp_path: Path
) -> None:
    database = live_server_env["MCP_EXAMPLE_DB"]
    with serve_example(live_server_env, tmp_path) as first:
        created = call(
            first,
            "tools/call",
            {"name": "slow_compute", "arguments": {"seconds": 1, "label": "restart"}},
            name="slow_compute",
        )
        task_id = created["result"]["taskId"]
        first.process.kill()
        first.process.wait(timeout=10)
    assert created["result"]["resultType"] == "task"
    assert status_in_database(database, task_id) == "working"  # no worker has run it yet

    with task_workers(live_server_env, tmp_path, count=1):
        deadline = time.monotonic() + WAIT_S
        while status_in_database(database, task_id) != "completed" and time.monotonic() < deadline:
            time.sleep(0.2)

    with serve_example(live_server_env, tmp_path) as second:
        reported = call(second, "tasks/get", {"taskId": task_id}, name=task_id)["result"]
    assert reported["status"] == "completed"
    assert reported["result"]["content"] == [{"type": "text", "text": "Computed restart in 1 s"}]


def test_a_running_task_is_cancelled_across_processes_and_hidden_from_other_users(example_server: LiveServer) -> None:
    alice, bob = example_server.tokens["alice"], example_server.tokens["bob"]
    created = call(
        example_server,
        "tools/call",
        {"name": "catalogue_report", "arguments": {"seconds": 600}},
        name="catalogue_report",
        token=alice,
    )["result"]
    task_id = created["taskId"]

    refused = call(example_server, "tasks/get", {"taskId": task_id}, name=task_id, token=bob)
    assert refused["error"]["code"] == -32602
    assert refused["error"]["message"] == f"Unknown task: {task_id}"

    deadline = time.monotonic() + WAIT_S
    while (status := call(example_server, "tasks/get", {"taskId": task_id}, name=task_id, token=alice)["result"]) and (
        status.get("statusMessage") is None and time.monotonic() < deadline
    ):
        time.sleep(0.2)
    assert status["status"] == "working"  # a worker picked it up and reported progress
    ack = call(example_server, "tasks/cancel", {"taskId": task_id}, name=task_id, token=alice)["result"]
    assert ack["resultType"] == "complete"
    assert call(example_server, "tasks/get", {"taskId": task_id}, name=task_id, token=alice)["result"]["status"] == (
        "cancelled"
    )
