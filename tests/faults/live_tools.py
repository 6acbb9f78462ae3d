"""Tools the live fault tests serve on `/faults/mcp`: sync code that holds its thread until told to stop.

A tool leaves files in `MCP_TEST_FAULTS_DIR` so the test sees what it did: `<marker>.started` when it
starts, `<marker>.finished` when it returns; it returns once `<marker>.release` exists (or `seconds` pass).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from mcp_django.registry import Registry

registry = Registry()


@registry.tool
def hold(marker: str, seconds: float = 600.0) -> str:
    """Hold a database thread until released (a stand-in for a runaway sync tool)."""
    directory = Path(os.environ["MCP_TEST_FAULTS_DIR"])
    (directory / f"{marker}.started").touch()
    deadline = time.monotonic() + seconds
    while not (directory / f"{marker}.release").exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    (directory / f"{marker}.finished").touch()
    return marker


registry.freeze()
