"""The official conformance suite (tests/conformance/test_official_suite.py) through the round-robin.

Every run of the suite against the fast path's `/conformance/mcp`, and the handshake-era run against the
view-served copy `/conformance/view/mcp`, served by two workers (daphne and uvicorn) on PostgreSQL and the
Redis channel layer, each request to the next worker, with the same baselines (so a stream resumed with
`Last-Event-ID` on the other worker too: server-sse-polling).

The 2026-07-28 run also runs the tasks extension's scenarios, unscored; here none of them may fail (as
`expected-failures-tasks.yml` asks of the single server): a task created through one worker is run by the
site's task workers and read, updated and answered through either.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conformance.test_official_suite import (
    FAST_PATH,
    RUN_TIME_LIMIT,
    RUNS,
    VIEW,
    _failed_checks,
    assert_suite_passes,
)
from tests.production.site import RoundRobin

pytestmark = [pytest.mark.production, pytest.mark.conformance, RUN_TIME_LIMIT]

TARGETS = [
    *(pytest.param(name, FAST_PATH, id=name) for name in RUNS),
    pytest.param("2025-11-25", VIEW, id="2025-11-25-view"),
]


@pytest.mark.parametrize(("run_name", "path"), TARGETS)
def test_official_conformance_suite_passes_through_the_round_robin(
    run_name: str, path: str, example_server: RoundRobin, tmp_path: Path
) -> None:
    logs = f"--- worker logs ---\n{example_server.log_tail()}"
    assert_suite_passes(RUNS[run_name], example_server.url(path), tmp_path, logs)
    tasks_failed = [line for line in _failed_checks(tmp_path) if line.startswith("tasks-")]
    assert not tasks_failed, "\n".join([*tasks_failed, logs])
