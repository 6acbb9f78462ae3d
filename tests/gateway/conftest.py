"""Backends for the gateway tests: the official SDK's server over HTTP (uvicorn) and commands for stdio ones."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT, _free_port, _wait_until_answering

CONFORMANCE = "/conformance/mcp"


def sdk_stdio_command() -> list[str]:
    """The official SDK's server (tests/gateway/sdk_backend.py) over stdio."""
    return [sys.executable, "-m", "tests.gateway.sdk_backend", "stdio"]


def mcp_stdio_command(endpoint: str = "conformance") -> list[str]:
    """The example project's `manage.py mcp_stdio` serving `endpoint`."""
    return [sys.executable, "manage.py", "mcp_stdio", "--endpoint", endpoint]


@pytest.fixture(scope="session")
def sdk_backend_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The official SDK's server (tests/gateway/sdk_backend.py) under uvicorn on a free loopback port."""
    port = _free_port()
    log_path = Path(tmp_path_factory.mktemp("sdk-backend")) / "uvicorn.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "tests.gateway.sdk_backend", "http", str(port)],
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        _wait_until_answering(process, "127.0.0.1", port, log_path, path="/mcp")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
