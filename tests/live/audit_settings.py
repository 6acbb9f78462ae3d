"""The example project's settings with the audit trail's settings from `MCP_TEST_AUDIT` (JSON), for the fault tests,
and SQLite's lock timeout from `MCP_TEST_SQLITE_TIMEOUT` (seconds) where a test sets it."""

import json
import os

from example_project.settings import *  # noqa: F403  # the example project, unchanged but for the audit keys
from example_project.settings import DATABASES, MCP_DJANGO

MCP_DJANGO = {**MCP_DJANGO, **json.loads(os.environ.get("MCP_TEST_AUDIT", "{}"))}
if "MCP_TEST_SQLITE_TIMEOUT" in os.environ:  # how long a query waits for SQLite's lock (the demo: 20 s)
    DATABASES["default"]["OPTIONS"] = {
        **DATABASES["default"]["OPTIONS"],
        "timeout": float(os.environ["MCP_TEST_SQLITE_TIMEOUT"]),
    }
