"""A browser-based MCP client through the round-robin (tests/live/test_cors_browser.py): chromium's preflights
and calls, a session's among them, alternate between the workers.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.live.test_cors_browser import *  # the tests, collected here against the fixture below
from tests.production.site import ProductionSite, RoundRobin

pytestmark = pytest.mark.production


@pytest.fixture(scope="module")  # type: ignore[no-redef]  # replaces the imported fixture
def cors_server(production: ProductionSite, live_server_env: dict[str, str], page_port: int) -> Iterator[RoundRobin]:
    env = {**live_server_env, "MCP_EXAMPLE_ALLOWED_ORIGINS": f"http://client.test:{page_port}"}
    with production.workers(env) as site:
        yield site
