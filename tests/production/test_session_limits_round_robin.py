"""Session caps and purges through the round-robin (tests/live/test_session_limits_live.py): the sessions of a
user or of anonymous callers are counted in PostgreSQL, whichever worker opened them, and
`manage.py mcp_clearsessions` runs on the site's database.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.live.test_session_limits_live import *  # the tests, collected here against the fixtures below
from tests.live.test_session_limits_live import LIMITS
from tests.production.site import ProductionSite, RoundRobin

pytestmark = pytest.mark.production


@pytest.fixture(scope="module")  # type: ignore[no-redef]  # replaces the imported fixture
def env(production: ProductionSite) -> dict[str, str]:
    """A database of this module's own (sessions of other tests would count against the caps) and the caps."""
    return {
        **production.database(),
        "DJANGO_SETTINGS_MODULE": "tests.live.limits_settings",
        "MCP_TEST_LIMITS": json.dumps(LIMITS),
    }


@pytest.fixture(scope="module")  # type: ignore[no-redef]  # replaces the imported fixture
def server(production: ProductionSite, env: dict[str, str]) -> Iterator[RoundRobin]:
    with production.workers(env) as site:
        yield site
