"""Runaway sync tools against a real daphne: the client going away, and SIGTERM while one runs (issue 13.5).

The server serves `tests.faults.live_tools` on `/faults/mcp` (`tests/faults/live_settings.py`); the
tool leaves files saying what it did. Waits are bounded by deadlines; nothing is timed.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import signal
import socket
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from mcp_django.runtime.executor import ABANDONED_EXIT_STATUS
from tests.conftest import LiveServer, serve_example

pytestmark = pytest.mark.live

WAIT_S = 60.0
STATELESS = "2026-07-28"


@contextlib.contextmanager
def faults_server(
    live_server_env: dict[str, str], directory: Path, settings: dict[str, Any], **env: str
) -> Iterator[tuple[LiveServer, Path]]:
    """The example project plus `tests.faults.live_urls` under daphne, on its own copy of the demo database."""
    markers, database = directory / "markers", directory / "db.sqlite3"
    markers.mkdir()
    shutil.copyfile(live_server_env["MCP_EXAMPLE_DB"], database)
    server_env = {
        **live_server_env,
        "MCP_EXAMPLE_DB": str(database),
        "DJANGO_SETTINGS_MODULE": "tests.faults.live_settings",
        "MCP_TEST_FAULTS": json.dumps({"AUDIT_SPOOL_DIR": str(directory / "spool"), **settings}),
        "MCP_TEST_FAULTS_DIR": str(markers),
        "MCP_DJANGO_LOG_LEVEL": "WARNING",
        **env,
    }
    with serve_example(server_env, directory) as server:
        yield server, markers


def hold_request(server: LiveServer, marker: str) -> socket.socket:
    """A socket that has sent a `hold` call (no answer read)."""
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "tools/call",
            "params": {
                "name": "hold",
                "arguments": {"marker": marker},
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": STATELESS,
                    "io.modelcontextprotocol/clientCapabilities": {},
                    "io.modelcontextprotocol/clientInfo": {"name": "tests", "version": "1"},
                },
            },
        }
    ).encode()
    url = urlsplit(server.url("/faults/mcp"))
    head = (
        f"POST {url.path} HTTP/1.1\r\nHost: {url.netloc}\r\nContent-Type: application/json\r\n"
        f"Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: {STATELESS}\r\n"
        f"Mcp-Method: tools/call\r\nMcp-Name: hold\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    connection = socket.create_connection((url.hostname, url.port), timeout=WAIT_S)
    connection.sendall(head.encode() + body)
    return connection


def wait_for(condition: Any, what: str, server: LiveServer) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {WAIT_S:.0f} s:\n{server.log_tail()}")
        time.sleep(0.02)


def test_a_client_that_goes_away_cancels_the_wait_for_its_sync_tool(
    live_server_env: dict[str, str], tmp_path: Path
) -> None:
    with faults_server(live_server_env, tmp_path, {}) as (server, markers):
        connection = hold_request(server, "gone")
        wait_for((markers / "gone.started").exists, "the tool's start", server)

        connection.close()
        wait_for(lambda: "hold abandoned" in server.log_tail(), "the request's cancellation", server)
        assert not (markers / "gone.finished").exists()  # cancelled while the tool still ran, not after it
        (markers / "gone.release").touch()  # a sync tool cannot be stopped: it runs on until it returns
        wait_for(lambda: "hold returned" in server.log_tail(), "the abandoned tool's return", server)

    assert "tests.faults.live_tools.hold abandoned after " in server.log_tail()
    with contextlib.closing(sqlite3.connect(tmp_path / "db.sqlite3")) as database:
        rows = database.execute("SELECT tool, outcome FROM mcp_django_toolcallrecord WHERE tool = 'hold'").fetchall()
    assert rows == [("hold", "cancelled")]  # nobody got an answer, but the call is in the trail


def test_sigterm_exits_within_the_grace_period_while_a_sync_tool_runs(
    live_server_env: dict[str, str], tmp_path: Path
) -> None:
    with faults_server(live_server_env, tmp_path, {"SHUTDOWN_GRACE": 1}) as (server, markers):
        connection = hold_request(server, "stuck")
        wait_for((markers / "stuck.started").exists, "the tool's start", server)

        server.process.send_signal(signal.SIGTERM)
        try:
            status = server.process.wait(timeout=WAIT_S)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"daphne still runs {WAIT_S:.0f} s after SIGTERM:\n{server.log_tail()}") from None
        connection.close()

    assert status == ABANDONED_EXIT_STATUS
    assert "Exiting with 1 sync job(s) still running after the 1.0 s shutdown grace period" in server.log_tail()
    assert not (markers / "stuck.finished").exists()
