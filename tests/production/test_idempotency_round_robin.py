"""Idempotency keys on PostgreSQL (tests/live/test_idempotency_live.py): a site of this module's own, a daphne and a
uvicorn worker on a fresh copy of the seeded database and Redis. A dropped response retried with its key, six
requests racing one key at both workers and a key reused with other books, as on SQLite: the books are added once.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.conftest import LiveServer
from tests.live.test_idempotency_live import *  # the tests, collected here against the fixture below
from tests.production.site import ProductionSite

pytestmark = pytest.mark.production


@pytest.fixture(scope="module")  # type: ignore[no-redef]  # replaces the imported fixture
def two_workers(production: ProductionSite) -> Iterator[tuple[LiveServer, LiveServer, dict[str, str]]]:
    env = production.database()
    with production.workers(env) as site:
        first, second = site.workers
        yield first, second, env
