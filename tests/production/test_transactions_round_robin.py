"""Tool calls as units of work on PostgreSQL (tests/live/test_transactions_live.py): a site of this module's own,
two workers with `ATOMIC_REQUESTS` on behind the round-robin, on a fresh copy of the seeded database (the books
these tests add must not show in other modules' catalogues).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.live.test_transactions_live import *  # the tests, collected here against the fixture below
from tests.production.site import ProductionSite, RoundRobin

pytestmark = pytest.mark.production


@pytest.fixture(scope="module")  # type: ignore[no-redef]  # replaces the imported fixture
def atomic_server(production: ProductionSite) -> Iterator[tuple[RoundRobin, dict[str, str]]]:
    env = {**production.database(), "MCP_EXAMPLE_ATOMIC_REQUESTS": "1"}
    with production.workers(env) as site:
        yield site, env
