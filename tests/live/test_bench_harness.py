"""The `make bench` harness, its pieces driven once in quick mode: no number is asserted, only that they work.

Serves the benchmark project's fast path and the bare floor under uvicorn, prepares the workloads
(handshake with a session, 2026-07-28, DRF token + audit), loads each for half a second with the
built-in driver, opens idle sessions, and writes the report.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks import report, run
from benchmarks.load import measure, wrk_script
from benchmarks.workloads import Prepared, prepare

pytestmark = pytest.mark.live


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, run.Running]]:
    folder = tmp_path_factory.mktemp("bench")
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "benchmarks.settings",
        "BENCH_DB": str(folder / "bench.sqlite3"),
        "PYTHONPATH": str(run.ROOT),
    }
    subprocess.run([sys.executable, "-m", "benchmarks.prepare"], cwd=run.ROOT, env=env, check=True)
    started = {key: run.start(run.SERVERS[key], env, folder) for key in ("floor-uvicorn", "fast-uvicorn")}
    try:
        for running in started.values():
            run.wait_serving(running, timeout=60)
        yield started
    finally:
        for running in started.values():
            run.stop(running)


def test_each_workload_is_prepared_loaded_and_reported(servers: dict[str, run.Running], tmp_path: Path) -> None:
    rows = [
        run.Row("floor-uvicorn", run.FLOOR, "/mcp"),
        run.Row("fast-uvicorn", run.CALL_SESSION, "/anon/mcp"),
        run.Row("fast-uvicorn", run.CALL_2026, "/anon/mcp"),
        run.Row("fast-uvicorn", run.CALL_2026_SYNC, "/anon/mcp"),
        run.Row("fast-uvicorn", run.ORM_2026, "/anon/mcp"),
        run.Row("fast-uvicorn", run.AUDIT_2026, "/audit/mcp"),
    ]
    results = []
    for row in rows:
        port, group = servers[row.server].port, servers[row.server].process.pid
        prepared = asyncio.run(prepare(row.workload, port, row.path))
        sample = measure(port, row.path, prepared, 0.5, 4, tmp_path, use_wrk=False, group=group)
        assert sample.calls_per_second > 0
        assert sample.failures == 0
        assert sample.server_us_per_call > 0
        results.append(run.result_of(row, [sample]))
    opened = asyncio.run(run.open_idle_sessions(servers["fast-uvicorn"].port, "/anon/mcp", 20))
    assert opened == 20

    output = tmp_path / "performance.md"
    report.write(report.Results(results, [], {"date": "today"}, "quick"), output)
    written = output.read_text()
    assert "| mcp_django fast path · uvicorn | tools/call, 2026-07-28, token + audit |" in written
    assert "| ≤ 2 KB of process memory per idle handshake session | — | not measured |" in written
    ET.parse(tmp_path / "performance.svg")


def test_the_wrk_script_gives_every_request_an_id_of_its_own() -> None:
    prepared = Prepared((b'{"jsonrpc":"2.0","method":"tools/list","id":1,"params":{}}',), {"Accept": "x"}, b"")
    script = wrk_script(prepared)
    assert "wrk.headers[ [====[Accept]====] ] = [====[x]====]" in script
    assert 'local heads = {[====[{"jsonrpc":"2.0","method":"tools/list","id":]====]}' in script
    assert "base + counter" in script
