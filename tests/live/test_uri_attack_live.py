"""A hostile `resources/read` URI (issue 36) sent to a real daphne: the template matcher stays linear.

`files://{+share}/{+folder}/{+name}/raw` compiled to the backtracking regex `(.+?)/(.+?)/(.+?)/raw` took time
cubic in a URI of slashes that does not end in `/raw` (20,000 characters: some 10^12 steps, hours of a
worker's thread). The matcher now answers it in one pass per piece of the template: the call is refused as
"resource not found" well within a bound that linear time meets on any machine and the cubic one never does.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcp_django.testing import MCPCallError, MCPHTTPTestClient
from tests.conftest import LiveServer, fresh_database, serve_example

pytestmark = pytest.mark.live

ATTACK_LENGTH = 20_000
ANSWER_BOUND_S = 30.0
"""Linear time answers in well under a second here; the cubic matcher needed hours for this URI."""


@pytest.fixture(scope="module")
def server(seeded_database: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    database = fresh_database(seeded_database, tmp_path_factory.mktemp("uri-attack-db"))
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.live.uri_attack_settings",
        "MCP_EXAMPLE_DB": str(database),
        "PYTHONUNBUFFERED": "1",
    }
    with serve_example(env, tmp_path_factory.mktemp("uri-attack")) as live:
        yield live


async def test_a_uri_built_to_make_the_template_matcher_backtrack_is_refused_in_linear_time(server: LiveServer) -> None:
    # The handshake era: the URI travels in the body only (2026-07-28 mirrors it in an Mcp-Name header).
    client = MCPHTTPTestClient(server.url("/files/mcp"), timeout=ANSWER_BOUND_S)
    fitting = await client.read_resource("files://docs/2026/report.txt/raw")
    assert fitting["contents"][0]["text"] == "docs|2026|report.txt"

    started = time.monotonic()
    with pytest.raises(MCPCallError) as refused:
        await client.read_resource("files://" + "/" * ATTACK_LENGTH + "x")
    elapsed = time.monotonic() - started

    assert refused.value.code == -32002, server.log_tail()
    assert elapsed < ANSWER_BOUND_S
    assert (await client.read_resource("files://a/b/c/raw"))["contents"][0]["text"] == "a|b|c"  # still serving
