"""The production-shaped leg: PostgreSQL, Redis and several workers behind a round-robin (tests/production/site.py).

Its tests carry the `production` marker. It runs in a plain `pytest` (so in `make test`) and when the
marker expression names it (`-m production`); a marker expression that does not name it (`-m "not
live"`, `-m "live or conformance"`) leaves it out, so the in-memory and live runs stay as quick as before.

Here `example_server` and `live_server_env`, the live suite's daphne on SQLite, are one round-robin site for
the whole session instead: the live modules re-collected in this directory (`from tests.live.test_… import *`)
run against it. A module whose tests change what others see (switch providers off, cap sessions) stands up a
site of its own with `production.workers(production.database())`.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.conftest import task_workers
from tests.production.site import ProductionSite, RoundRobin
from tests.services_support import postgres_cluster, redis_server


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    expression = config.getoption("markexpr") or ""
    if not expression or "production" in expression:
        return
    kept: list[pytest.Item] = []
    left_out: list[pytest.Item] = []
    for item in items:
        (kept if item.get_closest_marker("production") is None else left_out).append(item)
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = kept


@pytest.fixture(scope="session")
def production(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProductionSite]:
    """A PostgreSQL cluster and a Redis server for the whole session, and the seeded template database."""
    with postgres_cluster() as cluster, redis_server() as redis_url:
        yield ProductionSite(cluster, redis_url, tmp_path_factory.mktemp("production"))


@pytest.fixture(scope="session")
def live_server_env(production: ProductionSite) -> dict[str, str]:
    """The environment of the shared site: its own copy of the seeded PostgreSQL database and Redis database."""
    return production.database()


@pytest.fixture(scope="session")
def example_server(
    production: ProductionSite, live_server_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RoundRobin]:
    """Two workers (daphne and uvicorn) on `live_server_env` behind the round-robin, with the task workers the
    live suite's server has (`task_workers`), for the whole session."""
    log_dir = tmp_path_factory.mktemp("production-tasks")
    with task_workers(live_server_env, log_dir), production.workers(live_server_env) as site:
        yield site
