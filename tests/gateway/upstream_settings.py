"""The example project's settings with the OAuth-protected upstream of the per-user credential tests as
`SERVERS["accounts"]` (its base URL in `MCP_TEST_UPSTREAM_URL`), for the processes those tests start."""

import os

from example_project.settings import *  # noqa: F403  # the example project, plus one remote server
from example_project.settings import MCP_DJANGO

ALLOWED_HOSTS = ["localhost", "127.0.0.1", "[::1]", "testserver"]
MCP_DJANGO = {
    **MCP_DJANGO,
    "SERVERS": {
        **MCP_DJANGO["SERVERS"],
        "accounts": {"URL": f"{os.environ['MCP_TEST_UPSTREAM_URL']}/mcp", "AUTH": "oauth"},
    },
}
ROOT_URLCONF = "tests.gateway.upstream_urls"  # the connect pages, a gateway and a hub in front of it
