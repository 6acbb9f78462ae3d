"""The official `mcp` client's live tests (tests/live/test_official_client.py), every request through the round-robin.

Two workers (daphne and uvicorn) on PostgreSQL and the Redis channel layer; HAProxy sends each request
to the next worker, so a session's requests, and a streamed call's answers, alternate between them.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.live.test_official_client import *  # the tests, collected here against `example_server` below
from tests.production.site import ProductionSite, RoundRobin

pytestmark = pytest.mark.production


@pytest.fixture(scope="module")
def example_server(production: ProductionSite) -> Iterator[RoundRobin]:
    with production.workers(production.database()) as site:
        yield site
