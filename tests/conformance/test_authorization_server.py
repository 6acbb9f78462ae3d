"""The official suite's `conformance authorization` against the example project's authorization server.

`authorization-server-metadata-endpoint` reads the RFC 8414 metadata; `authorization-code-grant` prints an
authorization URL and waits for the redirect to `http://127.0.0.1:<port>/callback`. Headless Debian chromium
(Playwright) opens that URL, logs in as alice and allows the consent page, so the suite receives the code at
its own callback server and exchanges it. The client is registered beforehand (RFC 7591) with that redirect
URI, and the suite names the MCP endpoint (`--resource`) as MCP clients must.
"""

from __future__ import annotations

import json
import os
import queue
import re
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import httpx2 as httpx
import pytest

from tests.conformance.test_official_suite import _failed_checks, _node_bin, _node_major, _suite_binary
from tests.conftest import LiveServer, serve_example
from tests.live.test_admin_browser import chromium

pytestmark = [pytest.mark.live, pytest.mark.conformance, pytest.mark.timeout(240)]

VERSION = "0.2.0-alpha.12"
AUTHORIZATION_URL = re.compile(r"^(http://\S+/oauth/authorize/\?\S+)$")
SUITE_TIMEOUT_S = 120


@pytest.fixture(scope="module")
def authorization_server(
    live_server_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    with serve_example(live_server_env, tmp_path_factory.mktemp("as-log")) as server:
        yield server


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def register(server: LiveServer, redirect_uri: str) -> str:
    """An RFC 7591 registration of the suite's public client; its client_id."""
    metadata = {"client_name": "conformance", "redirect_uris": [redirect_uri], "token_endpoint_auth_method": "none"}
    response = httpx.post(server.url("/oauth/register/"), json=metadata, timeout=10)
    assert response.status_code == 201, response.text
    return str(response.json()["client_id"])


def suite_command(server: LiveServer, output_dir: Path, *args: str) -> list[str]:
    node_bin = _node_bin()
    binary = _suite_binary(VERSION)
    major = _node_major(node_bin)
    if major is None or major < 22:
        pytest.skip(f"Node >= 22 not found in {node_bin} (found {major}); run `make test`, which installs it")
    if not binary.exists():
        pytest.skip(f"conformance suite {VERSION} not installed at {binary}; run `make test`, which installs it")
    return [str(binary), "authorization", "--url", server.base_url, "-o", str(output_dir), *args]


def suite_env() -> dict[str, str]:
    return {**os.environ, "PATH": f"{_node_bin()}{os.pathsep}{os.environ.get('PATH', '')}", "NO_COLOR": "1"}


def lines_of(stream: IO[str]) -> queue.Queue[str | None]:
    """The lines `stream` prints, as they come (None at its end), read on a thread of their own."""
    lines: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        for line in stream:
            lines.put(line.rstrip("\n"))
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    return lines


def wait_for_authorization_url(lines: queue.Queue[str | None], printed: list[str]) -> str:
    while True:
        line = lines.get(timeout=SUITE_TIMEOUT_S)
        if line is None:
            raise AssertionError("the suite ended without an authorization URL:\n" + "\n".join(printed))
        printed.append(line)
        found = AUTHORIZATION_URL.match(line.strip())
        if found:
            return found[1]


def checks_of(output_dir: Path) -> dict[str, list[str]]:
    """Each scenario's check ids and statuses, from the `checks.json` files the suite wrote."""
    results: dict[str, list[str]] = {}
    for checks_file in sorted(output_dir.rglob("checks.json")):
        results[checks_file.parent.name] = [
            f"{check.get('id')} {check.get('status')}" for check in json.loads(checks_file.read_text())
        ]
    return results


def test_the_authorization_server_passes_the_official_authorization_scenarios_with_a_browser_consent(
    authorization_server: LiveServer, tmp_path: Path
) -> None:
    port = free_port()
    client_id = register(authorization_server, f"http://127.0.0.1:{port}/callback")
    output_dir = tmp_path / "results"
    command = suite_command(
        authorization_server,
        output_dir,
        *("--client-id", client_id, "--port", str(port), "--resource", authorization_server.url("/mcp")),
    )
    with chromium(tmp_path / "chromium-profile") as context:
        process = subprocess.Popen(
            command, cwd=tmp_path, env=suite_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        try:
            assert process.stdout is not None
            lines = lines_of(process.stdout)
            printed: list[str] = []
            url = wait_for_authorization_url(lines, printed)
            page = context.pages[0] if context.pages else context.new_page()
            page.goto(url)
            page.fill("input[name=username]", "alice")
            page.fill("input[name=password]", "alice")
            page.click("[type=submit]")
            page.wait_for_selector("input[name=allow]")
            page.click("input[name=allow]")
            page.wait_for_url(f"http://127.0.0.1:{port}/callback**")
            process.wait(timeout=SUITE_TIMEOUT_S)
            while (line := lines.get(timeout=5)) is not None:
                printed.append(line)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    report = "\n".join(printed) + f"\n--- server log ---\n{authorization_server.log_tail()}"
    checks = checks_of(output_dir)
    assert any("-authorization-server-metadata-endpoint-" in name for name in checks), report
    assert any("-authorization-code-grant-" in name for name in checks), report
    assert _failed_checks(output_dir) == [], report
    assert all(status.endswith("SUCCESS") for statuses in checks.values() for status in statuses), (checks, report)
    assert process.returncode == 0, report
