"""The example project's settings with the OAuth-protected upstream of the per-user credential tests as
`SERVERS["accounts"]` (its base URL in `MCP_TEST_UPSTREAM_URL`), for the processes those tests start."""

import os
from typing import Any, cast

from example_project.settings import *  # noqa: F403  # the example project, plus one remote server
from example_project.settings import MCP_DJANGO

ALLOWED_HOSTS = ["localhost", "127.0.0.1", "[::1]", "testserver"]
SERVERS: dict[str, Any] = dict(cast(dict[str, Any], MCP_DJANGO["SERVERS"]))  # a dict in the example
MCP_DJANGO = {
    **MCP_DJANGO,
    "SERVERS": {
        **SERVERS,
        "accounts": {"URL": f"{os.environ['MCP_TEST_UPSTREAM_URL']}/mcp", "AUTH": "oauth"},
    },
}
ROOT_URLCONF = "tests.gateway.upstream_live_urls"  # the example's, and the connect pages and a gateway to it
LOGIN_URL = "/oauth/login/"  # the connect pages send a signed-out browser to the OAuth server's login page
