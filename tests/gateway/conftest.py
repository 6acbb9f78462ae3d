"""Backends for the gateway tests: the official SDK's server over HTTP (uvicorn) and commands for stdio ones."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import (
    ROOT,
    LiveServer,
    _free_port,
    _wait_until_answering,
    serve_example,
    stop_process,
    task_workers,
)

CONFORMANCE = "/conformance/mcp"


def sdk_stdio_command() -> list[str]:
    """The official SDK's server (tests/gateway/sdk_backend.py) over stdio."""
    return [sys.executable, "-m", "tests.gateway.sdk_backend", "stdio"]


def mcp_stdio_command(endpoint: str = "conformance") -> list[str]:
    """The example project's `manage.py mcp_stdio` serving `endpoint`."""
    return [sys.executable, "manage.py", "mcp_stdio", "--endpoint", endpoint]


@contextlib.contextmanager
def serve_module(module: str, log_dir: Path, ready_path: str, *args: str, port: int | None = None) -> Iterator[str]:
    """Run `python -m <module> http <port> <args>` from the repository root until the block ends; its base URL.

    `port` defaults to a free one. Ready once `ready_path` answers over HTTP; its output goes to `log_dir`.
    """
    port = port or _free_port()
    log_path = log_dir / f"{module.rpartition('.')[2]}-{port}.log"
    with log_path.open("ab") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", module, "http", str(port), *args], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT
        )
    try:
        _wait_until_answering(process, "127.0.0.1", port, log_path, path=ready_path)
        yield f"http://127.0.0.1:{port}"
    finally:
        stop_process(process)


@pytest.fixture(scope="session")
def sdk_backend_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The official SDK's server (tests/gateway/sdk_backend.py) under uvicorn on a free loopback port."""
    with serve_module("tests.gateway.sdk_backend", tmp_path_factory.mktemp("sdk-backend"), "/mcp") as base:
        yield f"{base}/mcp"


def plain_backend(log_dir: Path, behaviour: str, *, port: int | None = None) -> contextlib.AbstractContextManager[str]:
    """tests/gateway/plain_backend.py behaving as `behaviour` (`ok`, `error`, `hang`, `garbage`); its MCP URL."""
    return serve_module("tests.gateway.plain_backend", log_dir, "/", behaviour, port=port)


@dataclass(frozen=True)
class GatewayServers:
    """Two daphnes serving the example project: `front`'s gateways reach `back`'s conformance fixture."""

    front: LiveServer
    back: LiveServer
    front_env: dict[str, str]


@pytest.fixture(scope="session")
def gateway_servers(
    live_server_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[GatewayServers]:
    """`front`'s `/gateway/mcp` fronts `back`'s `/conformance/mcp`; `front`'s `/gateway/chain/mcp` fronts the former.

    `back` has task workers of its own."""
    logs = tmp_path_factory.mktemp("gateway-log")
    # the back's workers run the tasks its conformance tools start (the tasks scenarios through the gateway)
    with task_workers(live_server_env, logs), serve_example(live_server_env, logs) as back:
        front_env = {**live_server_env, "MCP_EXAMPLE_GATEWAY_BACKEND_URL": back.url(CONFORMANCE)}
        with serve_example(front_env, logs) as front:
            yield GatewayServers(front, back, {**front_env, "MCP_EXAMPLE_BASE_URL": front.base_url})
