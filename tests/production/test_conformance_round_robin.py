"""The official conformance suite (tests/conformance/test_official_suite.py) through the round-robin.

Every run of the suite against `/conformance/mcp`, served by two workers (daphne and uvicorn) on
PostgreSQL and the Redis channel layer, each request to the next worker, with the same baselines (so a
stream resumed with `Last-Event-ID` on the other worker too: server-sse-polling).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conformance.test_official_suite import ANSI_COLOUR, FAST_PATH, RUNS, _failed_checks, run_suite
from tests.production.site import ProductionSite, RoundRobin

pytestmark = [pytest.mark.production, pytest.mark.conformance]


@pytest.fixture(scope="module")
def round_robin_server(production: ProductionSite) -> Iterator[RoundRobin]:
    with production.workers(production.database()) as site:
        yield site


@pytest.mark.parametrize("run_name", list(RUNS))
def test_official_conformance_suite_passes_through_the_round_robin(
    run_name: str, round_robin_server: RoundRobin, tmp_path: Path
) -> None:
    run = RUNS[run_name]
    result = run_suite(run, round_robin_server.url(FAST_PATH), tmp_path)
    output = ANSI_COLOUR.sub("", result.stdout)
    summary = output[output.find("=== SUMMARY ===") :] if "=== SUMMARY ===" in output else output[-4000:]
    print(summary)
    if result.returncode != 0:
        pytest.fail(
            f"conformance {run.version} {' '.join(run.args)} exited {result.returncode} through the round-robin\n"
            f"--- summary ---\n{summary}\n--- stderr ---\n{result.stderr[-3000:]}\n"
            f"--- checks that did not pass ---\n{chr(10).join(_failed_checks(tmp_path))}\n"
            f"--- worker logs ---\n{round_robin_server.log_tail()}",
            pytrace=False,
        )
