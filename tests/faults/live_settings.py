"""The example project's settings with `tests.faults.live_urls`, and the `MCP_DJANGO` keys in `MCP_TEST_FAULTS`."""

import json
import os

from example_project.settings import *  # noqa: F403  # the example project, but for the URLs and the keys below
from example_project.settings import MCP_DJANGO

ROOT_URLCONF = "tests.faults.live_urls"
MCP_DJANGO = {**MCP_DJANGO, **json.loads(os.environ.get("MCP_TEST_FAULTS", "{}"))}
if "MCP_TEST_DB_TIMEOUT" in os.environ:  # how long SQLite waits for a lock before "database is locked"
    DATABASES["default"]["OPTIONS"]["timeout"] = float(os.environ["MCP_TEST_DB_TIMEOUT"])  # noqa: F405
