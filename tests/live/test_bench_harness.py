"""The `make bench` harness, its pieces driven once in quick mode: no number is asserted, only that they work.

Serves the benchmark project's fast path and the bare floor under uvicorn, prepares the workloads
(handshake with a session, 2026-07-28, DRF token + audit), loads each for half a second with the
built-in driver, opens idle sessions, and writes the report. The telemetry rows (issue 21) too: the plain
process's telemetry endpoint on the API alone, and a process with an SDK that drops its exports.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchmarks import postgres, report, report_targets, report_wsgi, run
from benchmarks.load import Sample, measure, wrk_script
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
    started = {
        key: run.start(run.SERVERS[key], env, folder) for key in ("floor-uvicorn", "fast-uvicorn", report.SDK_SERVER)
    }
    try:
        for running in started.values():
            run.wait_serving(running, timeout=60)
        yield started
    finally:
        for running in started.values():
            run.stop(running)


def measured(rows: list[Any], servers: dict[str, Any], tmp_path: Path) -> list[Any]:
    """One short sample of each row on its server, each checked to have served calls and counted their CPU."""
    results = []
    for row in rows:
        port, group = servers[row.server].port, servers[row.server].process.pid
        prepared = asyncio.run(prepare(row.workload, port, row.path))
        sample = measure(port, row.path, prepared, 0.5, 4, tmp_path, use_wrk=False, group=group)
        assert sample.calls_per_second > 0
        assert sample.failures == 0
        assert sample.server_us_per_call > 0
        results.append(run.result_of(row, [sample]))
    return results


def test_each_workload_is_prepared_loaded_and_reported(servers: dict[str, run.Running], tmp_path: Path) -> None:
    rows = [
        run.Row("floor-uvicorn", run.FLOOR, "/mcp"),
        run.Row("fast-uvicorn", run.CALL_SESSION, "/anon/mcp"),
        run.Row("fast-uvicorn", run.CALL_2026, "/anon/mcp"),
        run.Row("fast-uvicorn", run.CALL_2026_SYNC, "/anon/mcp"),
        run.Row("fast-uvicorn", run.ORM_2026, "/anon/mcp"),
        run.Row("fast-uvicorn", run.AUDIT_2026, "/audit/mcp"),
    ]
    results = measured(rows, servers, tmp_path)
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


def test_the_telemetry_rows_are_loaded_beside_the_plain_row_and_judged_on_cpu(
    servers: dict[str, run.Running], tmp_path: Path
) -> None:
    rows = [run.Row("fast-uvicorn", run.CALL_2026, "/anon/mcp")]
    rows += [row for row in run.TELEMETRY_ROWS if row.workload.key.removesuffix(report.API_ONLY) == "call-2026"]
    assert [(row.server, row.path) for row in rows[1:]] == [
        ("fast-uvicorn", "/otel/mcp"),
        (report.SDK_SERVER, "/otel/mcp"),
    ]
    results = measured(rows, servers, tmp_path)

    written = report.telemetry_section(report.Results(results, [], {"date": "today"}, "quick"))
    assert "| tools/call, 2026-07-28 | no telemetry (the plain row) |" in written
    assert (
        "| tools/call, 2026-07-28 | TelemetryExtension, opentelemetry-api only (no SDK configured), same process |"
        in written
    )
    assert (
        "| tools/call, 2026-07-28 | TelemetryExtension, SDK: BatchSpanProcessor + MeterProvider, exports dropped |"
        in written
    )
    target = "| telemetry on the API only: ≤ 3% more CPU per call than none (judged on CPU per call, not calls/s) |"
    assert target in written
    assert "| not measured |" not in written


def sample(cpu: float) -> Sample:
    return Sample(1000.0, 1.0, 2.0, 0, requests=1000, server_us_per_call=cpu)


def test_the_telemetry_section_alone_is_rewritten_and_the_rest_of_the_page_is_kept(tmp_path: Path) -> None:
    def results(api_cpu: float) -> report.Results:
        plain, api_only = run.Row("fast-uvicorn", run.CALL_2026, "/anon/mcp"), run.TELEMETRY_ROWS[2]
        assert api_only.workload.key == "call-2026" + report.API_ONLY
        rows = [run.result_of(plain, [sample(200.0)]), run.result_of(api_only, [sample(api_cpu)])]
        return report.Results(rows, [], {"date": "today"}, "quick")

    page = tmp_path / "performance.md"
    page.write_text("# Performance\n\nthe full run's table\n\n## Machine\n\n- **cpu**: two\n")
    report.update_telemetry_section(results(204.0), page)
    first = page.read_text()
    assert first.startswith("# Performance\n\nthe full run's table\n\n" + report.TELEMETRY_BEGIN)
    assert first.endswith(report.TELEMETRY_END + "\n\n## Machine\n\n- **cpu**: two\n")
    assert "2026-07-28 CPU +2.0% (calls/s +0.0%) | met |" in first

    report.update_telemetry_section(results(210.0), page)
    second = page.read_text()
    assert second.count("## Telemetry (issue 21)") == 1
    assert "2026-07-28 CPU +5.0% (calls/s +0.0%) | missed |" in second
    assert second.split(report.TELEMETRY_BEGIN)[0] == first.split(report.TELEMETRY_BEGIN)[0]
    assert second.split(report.TELEMETRY_END)[1] == first.split(report.TELEMETRY_END)[1]


def test_the_wsgi_rows_are_served_by_gunicorn_and_written_to_their_own_section(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "benchmarks.settings",
        "BENCH_DB": str(tmp_path / "bench.sqlite3"),
        "PYTHONPATH": str(run.ROOT),
    }
    subprocess.run([sys.executable, "-m", "benchmarks.prepare"], cwd=run.ROOT, env=env, check=True)
    started = {key: run.start(run.SERVERS[key], env, tmp_path) for key in ("floor-gunicorn", "fast-gunicorn")}
    try:
        for running in started.values():
            run.wait_serving(running, timeout=60)
        rows = [row for row in run.WSGI_ROWS if row.server in started]
        results = measured(rows, started, tmp_path)
    finally:
        for running in started.values():
            run.stop(running)
    peer = [
        run.result_of(run.Row("mcpz-gunicorn", workload, "/mcpz/mcp"), [sample(cpu)])
        for workload, cpu in ((run.CALL_2026_SYNC, 900.0), (run.CALL_STATELESS_SYNC, 900.0))
    ]
    fast = [
        run.result_of(run.Row("fast-gunicorn", workload, path), [sample(400.0)])
        for workload, path in ((run.CALL_2026_SYNC, "/anon/mcp"), (run.CALL_STATELESS_SYNC, "/stateless/mcp"))
    ]

    page = tmp_path / "performance.md"
    page.write_text("# Performance\n\nthe full run's table\n\n## Machine\n\n- **cpu**: two\n")
    report_wsgi.update_wsgi_section(report.Results(results, [], {"date": "today"}, "quick, 1 session"), page)
    measured_page = page.read_text()
    report_wsgi.update_wsgi_section(report.Results(peer + fast, [], {"date": "today"}, "quick, 1 session"), page)
    judged = page.read_text()

    assert "| mcp_django WSGI fast path · gunicorn sync | tools/call, 2026-07-28, sync tool |" in measured_page
    assert "| bare WSGI · gunicorn sync | fixed JSON body |" in measured_page
    assert "django-mcpz's view (sync echo) | — | not measured |" in measured_page
    assert judged.count("## WSGI: gunicorn's sync worker") == 1
    assert "| 2026 sync 2.25\N{MULTIPLICATION SIGN}, handshake era sync 2.25\N{MULTIPLICATION SIGN} | met |" in judged
    assert judged.endswith(report.KEPT_WSGI[1] + "\n\n## Machine\n\n- **cpu**: two\n")


def test_the_token_and_audit_rows_are_served_from_a_throwaway_postgresql_cluster(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "benchmarks.settings",
        "BENCH_DB": str(tmp_path / "bench.sqlite3"),
        "PYTHONPATH": str(run.ROOT),
    }
    with contextlib.ExitStack() as stack:
        served = postgres.database_env(env, stack)
        assert isinstance(served, dict), served
        assert served["BENCH_DATABASE_URL"].startswith("postgresql://bench@127.0.0.1:")
        server = run.start(run.SERVERS["fast-uvicorn-pg"], served, tmp_path)
        try:
            run.wait_serving(server, timeout=60)
            results = measured(list(run.POSTGRES_ROWS), {"fast-uvicorn-pg": server}, tmp_path)
        finally:
            run.stop(server)
        import psycopg

        with psycopg.connect(served["BENCH_DATABASE_URL"]) as connection:
            stored = connection.execute("SELECT count(*) FROM mcp_django_toolcallrecord").fetchone()
        assert stored is not None
        assert stored[0] >= sum(row.samples[0].requests for row in results)
    written = report_targets.targets_section(report.Results(results, [], {"date": "today"}, "quick, 1 session"))
    assert "| mcp_django fast path · uvicorn, PostgreSQL | tools/call, 2026-07-28, token + audit |" in written


def test_the_targets_section_judges_the_audited_call_on_sqlite_and_postgresql(tmp_path: Path) -> None:
    rows = [
        (run.Row("floor-uvicorn", run.FLOOR, "/mcp"), 50.0),
        (run.Row("sdk-stateless", run.CALL_2026, "/mcp"), 600.0),
        (run.Row("sdk-stateless", run.CALL_2026_SYNC, "/mcp"), 900.0),
        (run.Row("fast-uvicorn", run.CALL_2026, "/anon/mcp"), 200.0),
        (run.Row("fast-uvicorn", run.TEN_2026, "/ten/mcp"), 220.0),
        (run.Row("fast-uvicorn", run.AUDIT_2026, "/audit/mcp"), 300.0),
        (run.Row("fast-uvicorn", run.AUDIT_2026_SYNC, "/audit/mcp"), 500.0),
        (run.Row("fast-uvicorn-pg", run.AUDIT_2026, "/audit/mcp"), 500.0),
        (run.Row("fast-uvicorn-pg", run.AUDIT_2026_SYNC, "/audit/mcp"), 600.0),
    ]
    results = report.Results([run.result_of(row, [sample(cpu)]) for row, cpu in rows], [], {"date": "today"}, "quick")
    page = tmp_path / "performance.md"
    page.write_text("# Performance\n\nthe full run's table\n\n## Machine\n\n- **cpu**: two\n")
    report_targets.update_targets_section(results, page)
    written = page.read_text()

    times = "\N{MULTIPLICATION SIGN}"
    assert f"SQLite in WAL | async (600 ÷ 300) 2.00{times}, sync (900 ÷ 500) 1.80{times} | met |" in written
    assert f"on PostgreSQL | async (600 ÷ 500) 1.20{times}, sync (900 ÷ 600) 1.50{times} | missed |" in written
    assert f"≤ 3{times} the bare floor's CPU per call | async (200 ÷ 50) 4.0{times} | missed |" in written
    assert "≤ 15% more CPU per call than none | cost (220 ÷ 200) +10% | met |" in written
    assert written.endswith(report.KEPT_TARGETS[1] + "\n\n## Machine\n\n- **cpu**: two\n")
