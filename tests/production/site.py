"""The production shape, stood up for real: N workers on PostgreSQL and Redis behind an HAProxy round-robin.

The pytest leg (`tests/production/`) and `make soak` (`tests/production/soak.py`) share it. One
PostgreSQL cluster holds a migrated, seeded template database; each site gets its own copy of it
(`CREATE DATABASE ... TEMPLATE`), its own Redis database for the Channels layer, and its workers.
"""

from __future__ import annotations

import contextlib
import itertools
import os
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.conftest import LiveServer, _manage, serve_example
from tests.http_support import ACCEPT, stateless, stateless_headers
from tests.services_support import PostgresCluster, round_robin

TEMPLATE = "mcp_demo_template"
REDIS_DATABASES = 16
WORKER_SERVERS = ("daphne", "uvicorn")


@dataclass(frozen=True)
class RoundRobin(LiveServer):
    """The load balancer in front of the workers, usable wherever a live server is (its URL, the tokens)."""

    workers: tuple[LiveServer, ...] = ()

    def log_tail(self, lines: int = 60) -> str:
        """The last lines of every worker's log."""
        return "\n".join(f"--- {worker.base_url} ---\n{worker.log_tail(lines)}" for worker in self.workers)


class ProductionSite:
    """Databases and worker sets on one PostgreSQL cluster and one Redis server."""

    def __init__(self, cluster: PostgresCluster, redis_url: str, directory: Path) -> None:
        self.cluster = cluster
        self.redis_base = redis_url.rsplit("/", 1)[0]
        self.directory = directory
        self._numbers = itertools.count(1)
        self.template_env = self._env(cluster.url(TEMPLATE), redis_database=0)
        cluster.execute(f'CREATE DATABASE "{TEMPLATE}"')
        _manage("migrate", "--noinput", env=self.template_env)
        _manage("seed_demo", env=self.template_env)

    def _env(self, database_url: str, redis_database: int) -> dict[str, str]:
        return {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": os.environ.get("DJANGO_SETTINGS_MODULE", "example_project.settings"),
            "MCP_EXAMPLE_DATABASE_URL": database_url,
            "MCP_EXAMPLE_REDIS_URL": f"{self.redis_base}/{redis_database}",
            "PYTHONUNBUFFERED": "1",
        }

    def database(self) -> dict[str, str]:
        """The environment of a new site: a fresh copy of the seeded database and a Redis database of its own."""
        number = next(self._numbers)
        url = self.cluster.copy(TEMPLATE, f"mcp_demo_{number}")
        return self._env(url, redis_database=number % REDIS_DATABASES)

    @contextlib.contextmanager
    def workers(self, env: dict[str, str], servers: Sequence[str] = WORKER_SERVERS) -> Iterator[RoundRobin]:
        """One worker per entry of `servers` (daphne, uvicorn) on `env`, behind a round-robin, until the block ends."""
        directory = self.directory / f"site-{next(self._numbers)}"
        directory.mkdir(parents=True)
        with contextlib.ExitStack() as stack:
            started = [stack.enter_context(serve_example(env, directory, server=server)) for server in servers]
            backends = [worker.base_url.removeprefix("http://") for worker in started]
            url = stack.enter_context(round_robin(backends, directory))
            yield RoundRobin(
                base_url=url,
                log_path=started[0].log_path,
                process=started[0].process,
                tokens=started[0].tokens,
                workers=tuple(started),
            )


def audit_rows(database_url: str, tool: str = "search_books") -> Counter[str]:
    """How many audit rows each `query` argument of `tool` has in the site's database."""
    import psycopg

    with psycopg.connect(database_url) as connection:
        rows = connection.execute(
            "SELECT arguments->>'query', count(*) FROM mcp_django_toolcallrecord WHERE tool = %s GROUP BY 1", [tool]
        ).fetchall()
    return Counter({str(query): int(count) for query, count in rows})


def stateless_call(
    tool: str, arguments: dict[str, Any], token: str, id: int = 1
) -> tuple[dict[str, Any], dict[str, str]]:
    """The body and headers of a 2026-07-28 `tools/call` of `tool` as the holder of `token`."""
    body = stateless("tools/call", {"name": tool, "arguments": arguments}, id=id)
    headers = {
        "Content-Type": "application/json",
        "Accept": ACCEPT,
        "Authorization": f"Bearer {token}",
        **stateless_headers("tools/call", tool),
    }
    return body, headers
