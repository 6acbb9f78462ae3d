"""The MCP Inspector's CLI (npm `@modelcontextprotocol/inspector`, Node 22) against the example project.

A token-protected endpoint is reached with `--header "Authorization: Bearer <token>"`, as docs/authentication.md
tells Inspector users. `make test` installs the Inspector into `.cache/inspector-<version>/`
(`MCP_TEST_INSPECTOR` names another binary); without it, or without Node 22, the tests are skipped, saying so.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import LiveServer

pytestmark = pytest.mark.live

ROOT = Path(__file__).resolve().parents[2]
INSPECTOR_VERSION = "2.12.0"
TIMEOUT_S = 60


def inspector() -> list[str]:
    """The command that runs the Inspector's CLI with Node 22; skips the test without either."""
    configured = os.environ.get("MCP_TEST_INSPECTOR")
    cache = Path(os.environ.get("MCP_TEST_CONFORMANCE_DIR") or ROOT / ".cache")
    installed = cache / f"inspector-{INSPECTOR_VERSION}" / "node_modules" / ".bin" / "mcp-inspector"
    binary = Path(configured) if configured else installed
    node_bin = os.environ.get("MCP_TEST_NODE_BIN") or str(ROOT / ".cache/node22/node_modules/.bin")
    node = shutil.which("node", path=node_bin)
    if not binary.exists() or node is None:
        pytest.skip(f"the MCP Inspector {INSPECTOR_VERSION} or Node 22 is not installed (make test installs both)")
    return [node, str(binary.resolve()), "--cli"]


def run_cli(server: LiveServer, tmp_path: Path, *arguments: str, token: str | None) -> subprocess.CompletedProcess[str]:
    command = [*inspector(), server.url("/mcp"), *arguments]
    if token is not None:
        command += ["--header", f"Authorization: Bearer {token}"]
    return subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        env={**os.environ, "HOME": str(tmp_path), "NO_COLOR": "1"},
        stdin=subprocess.DEVNULL,
        check=False,
    )


def answer(completed: subprocess.CompletedProcess[str]) -> Any:
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return json.loads(completed.stdout)


def test_the_inspector_lists_the_tools_with_a_header_token(example_server: LiveServer, tmp_path: Path) -> None:
    listed = answer(run_cli(example_server, tmp_path, "--method", "tools/list", token=example_server.tokens["carol"]))

    assert {"search_books", "catalogue_stats"} <= {tool["name"] for tool in listed["tools"]}


def test_the_inspector_calls_a_tool_with_a_header_token(example_server: LiveServer, tmp_path: Path) -> None:
    called = answer(
        run_cli(
            example_server,
            tmp_path,
            "--method",
            "tools/call",
            "--tool-name",
            "search_books",
            "--tool-arg",
            "query=Dune",
            token=example_server.tokens["carol"],
        )
    )

    assert not called.get("isError"), called
    assert "Dune" in called["content"][0]["text"]


def test_without_the_header_the_inspector_is_asked_to_authenticate(example_server: LiveServer, tmp_path: Path) -> None:
    completed = run_cli(example_server, tmp_path, "--method", "tools/list", token=None)

    assert completed.returncode != 0
    assert json.loads(completed.stderr)["error"]["code"] == "auth_required"  # it wants to sign in
