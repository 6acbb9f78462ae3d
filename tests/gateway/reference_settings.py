"""The example project's settings with the reference servers of tests/gateway/test_reference_servers_live.py as
remote servers (`MCP_TEST_EVERYTHING_*`, `MCP_TEST_ERRING_URL`, `MCP_TEST_HANGING_URL`), for the daphne it starts."""

import os
from typing import Any, cast

from example_project.settings import *  # noqa: F403  # the example project, plus the reference servers
from example_project.settings import MCP_DJANGO

ALLOWED_HOSTS = ["localhost", "127.0.0.1", "[::1]", "testserver"]
SERVERS: dict[str, Any] = dict(cast(dict[str, Any], MCP_DJANGO["SERVERS"]))  # a dict in the example
MCP_DJANGO = {
    **MCP_DJANGO,
    "SERVERS": {
        **SERVERS,
        # @modelcontextprotocol/server-everything over stdio (started by the hub) and over Streamable HTTP
        "everything": {"COMMAND": [os.environ["MCP_TEST_NODE"], os.environ["MCP_TEST_EVERYTHING_JS"], "stdio"]},
        "everything-http": {"URL": os.environ["MCP_TEST_EVERYTHING_URL"]},
        "erring": {"URL": os.environ["MCP_TEST_ERRING_URL"]},
        "hanging": {"URL": os.environ["MCP_TEST_HANGING_URL"]},
    },
    "REMOTE_LIST_TIMEOUT": float(os.environ["MCP_TEST_LIST_TIMEOUT"]),
}
ROOT_URLCONF = "tests.gateway.reference_urls"
